import { readFile } from 'node:fs/promises';
import type { ProfileWindow } from './profile-summary';

/**
 * What `node --trace-gc` wrote in a server's log, summed over a window (ms since the process
 * started): how much the heap grew between collections (what the code allocated), and how long
 * the collections took. The third round of issue 38 read allocation this way, by hand.
 */
export interface GcSummary {
  scavenges: number;
  markCompacts: number;
  /** MB allocated: each collection's heap before it, less the heap after the one before. */
  allocatedMb: number;
  /** ms spent in the collections (their pause, V8's own figure). */
  pauseMs: number;
}

// [pid:isolate]  1234 ms: Scavenge 45.2 (60.1) -> 30.1 (61.1) MB, pooled: 0 MB, 2.31 / 0.00 ms  …
const LINE =
  /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: (Scavenge|Mark-Compact|Minor Mark-Sweep)\S*(?: \([^)]*\))? ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \//;

export function summariseGcTrace(text: string, window: ProfileWindow): GcSummary {
  const summary: GcSummary = { scavenges: 0, markCompacts: 0, allocatedMb: 0, pauseMs: 0 };
  let after: number | undefined;
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const [, at, kind, before, afterThis, pause] = match;
    const inWindow = Number(at) >= window.fromMs && Number(at) <= window.toMs;
    if (inWindow && after !== undefined) {
      summary.allocatedMb += Math.max(0, Number(before) - after);
      summary.pauseMs += Number(pause);
      if (kind === 'Mark-Compact') summary.markCompacts += 1;
      else summary.scavenges += 1;
    }
    after = Number(afterThis);
  }
  return summary;
}

export async function readGcSummary(logFile: string, window: ProfileWindow): Promise<GcSummary> {
  return summariseGcTrace(await readFile(logFile, 'utf8'), window);
}

/** One line for the profile's report: per request when `requests` is given. */
export function formatGcSummary(gc: GcSummary, requests: number): string {
  const perRequest = (value: number, unit: number) => ((value * unit) / requests).toFixed(1);
  return (
    `GC (--trace-gc, the measured run): ${gc.scavenges} scavenges, ${gc.markCompacts} mark-compacts, ` +
    `${gc.allocatedMb.toFixed(0)} MB allocated (${perRequest(gc.allocatedMb, 1024)} KB a request), ` +
    `${gc.pauseMs.toFixed(0)} ms of pauses (${perRequest(gc.pauseMs, 1000)} µs a request).`
  );
}
