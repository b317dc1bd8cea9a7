import { readFile } from 'node:fs/promises';
import type { ProfileWindow } from './profile-summary';

/**
 * What `node --trace-gc-nvp` wrote in a server's log, summed over a window (ms since the process
 * started): how much the heap grew between collections (what the code allocated), how long the
 * collections took, and what each scavenge kept: the bytes it copied within the young generation
 * and the bytes it promoted to the old one. A scavenge costs what survives it (issue 38's fifth
 * round: ours' ~1 MB a scavenge against yoga-jit's ~0.1 MB was the gap in its GC time).
 */
export interface GcSummary {
  scavenges: number;
  markCompacts: number;
  /** MB allocated: each collection's heap before it, less the heap after the one before. */
  allocatedMb: number;
  /** ms spent in the collections (their pause, V8's own figure). */
  pauseMs: number;
  /** ms of that in scavenges. */
  scavengePauseMs: number;
  /** MB the scavenges copied within the young generation, and MB they promoted. */
  survivedMb: number;
  promotedMb: number;
}

// [pid:isolate:0]  1234 ms: pause=2.3 mutator=80.1 gc=s … start_object_size=… end_object_size=… promoted=… new_space_survived=…
const LINE = /^\[[\d:x a-f]+\]\s+(\d+) ms: pause=([\d.]+) .*?\bgc=(\w+) /;
const field = (line: string, name: string) => Number(new RegExp(` ${name}=(\\d+)`).exec(line)?.[1] ?? 0);
const MB = 1024 * 1024;

export function summariseGcTrace(text: string, window: ProfileWindow): GcSummary {
  const summary: GcSummary = {
    scavenges: 0,
    markCompacts: 0,
    allocatedMb: 0,
    pauseMs: 0,
    scavengePauseMs: 0,
    survivedMb: 0,
    promotedMb: 0,
  };
  let after: number | undefined;
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const [, at, pause, kind] = match;
    const inWindow = Number(at) >= window.fromMs && Number(at) <= window.toMs;
    if (inWindow && after !== undefined) {
      summary.allocatedMb += Math.max(0, field(line, 'start_object_size') - after) / MB;
      summary.pauseMs += Number(pause);
      if (kind === 's') {
        summary.scavenges += 1;
        summary.scavengePauseMs += Number(pause);
        summary.survivedMb += field(line, 'new_space_survived') / MB;
        summary.promotedMb += field(line, 'promoted') / MB;
      } else summary.markCompacts += 1;
    }
    after = field(line, 'end_object_size');
  }
  return summary;
}

export async function readGcSummary(logFile: string, window: ProfileWindow): Promise<GcSummary> {
  return summariseGcTrace(await readFile(logFile, 'utf8'), window);
}

/** Two lines for the profile's report: per request when `requests` is given. */
export function formatGcSummary(gc: GcSummary, requests: number): string {
  const perRequest = (value: number, unit: number) => ((value * unit) / requests).toFixed(1);
  const perScavenge = (mb: number) => (gc.scavenges > 0 ? (mb * 1024) / gc.scavenges : 0).toFixed(0);
  return (
    `GC (--trace-gc-nvp, the measured run): ${gc.scavenges} scavenges, ${gc.markCompacts} mark-compacts, ` +
    `${gc.allocatedMb.toFixed(0)} MB allocated (${perRequest(gc.allocatedMb, 1024)} KB a request), ` +
    `${gc.pauseMs.toFixed(0)} ms of pauses (${perRequest(gc.pauseMs, 1000)} µs a request).\n` +
    `Each scavenge: ${(gc.scavengePauseMs / Math.max(1, gc.scavenges)).toFixed(2)} ms, ` +
    `${perScavenge(gc.survivedMb)} KB kept in the young generation, ${perScavenge(gc.promotedMb)} KB promoted.`
  );
}
