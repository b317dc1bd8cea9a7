import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/**
 * Top functions by self time of a V8 .cpuprofile (from `node --cpu-prof`), and the same time
 * grouped by where the code lives (our src/, a package in node_modules, Node internals).
 *
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 15] [--from MS] [--to MS]
 *
 * --from/--to keep only the samples taken in that window (ms from the profile's start), e.g. the
 * measured run without start-up and warm-up; `npm run bench -- --profile <scenario>` does that.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTimeRow {
  name: string;
  where: string;
  selfMs: number;
  percent: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Sampled time not spent idle, in ms ("(idle)" excluded). */
  busyMs: number;
  top: SelfTimeRow[];
  byOrigin: { origin: string; selfMs: number; percent: number }[];
}

function shortUrl(url: string): string {
  if (!url) return '';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) return file.slice(modules + 'node_modules/'.length);
  const relative = path.relative(process.cwd(), file);
  if (!relative.startsWith('..')) return relative;
  // Another checkout's (ours-before's) sources, by their path in it.
  const source = /\/((?:src|bench|seed)\/.*)$/.exec(file);
  return source ? source[1]! : file;
}

/** src/…, a package name (scoped or not), node:internal, or (native/GC/idle/program). */
function originOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native V8/C++)';
  if (url.startsWith('node:')) return 'node: internals';
  const short = shortUrl(url);
  if (url.includes('node_modules/')) {
    const parts = short.split('/');
    return (parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]) ?? short;
  }
  const top = short.split('/')[0] ?? short;
  return ['src', 'bench', 'seed'].includes(top) ? `${top}/` : short;
}

const sourceMaps = new Map<string, SourceMap | undefined>();

/**
 * A bundled function (the bench runs every server from an esbuild bundle, with a `.map` beside
 * it) as the source file it came from, so that src/ is still src/; any other frame as it is.
 */
function sourceFrame(frame: CallFrame): CallFrame {
  if (!frame.url.startsWith('file://') || frame.url.includes('node_modules/')) return frame;
  let map = sourceMaps.get(frame.url);
  if (!sourceMaps.has(frame.url)) {
    const file = `${fileURLToPath(frame.url)}.map`;
    map = existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : undefined;
    sourceMaps.set(frame.url, map);
  }
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber);
  if (!entry || !('originalSource' in entry)) return frame;
  const source = path.resolve(path.dirname(fileURLToPath(frame.url)), entry.originalSource);
  return { ...frame, url: pathToFileURL(source).href, lineNumber: entry.originalLine };
}

/** A time window in ms from the start of the profile (e.g. the measured run, without start-up). */
export interface ProfileWindow {
  fromMs: number;
  toMs: number;
}

export function summariseProfile(profile: CpuProfile, topCount = 15, window?: ProfileWindow): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let elapsedUs = 0;
  for (let index = 0; index < profile.samples.length; index++) {
    const id = profile.samples[index] as number;
    const delta = profile.timeDeltas[index] ?? 0;
    elapsedUs += delta;
    if (window && (elapsedUs < window.fromMs * 1000 || elapsedUs > window.toMs * 1000)) continue;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  }
  const totalUs = [...selfUs.values()].reduce((sum, us) => sum + us, 0);
  const functions = new Map<string, { name: string; where: string; us: number }>();
  const origins = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const bundled = byId.get(id)?.callFrame;
    if (!bundled) continue;
    const frame = sourceFrame(bundled);
    if (frame.functionName === '(idle)') idleUs += us;
    const name = frame.functionName || '(anonymous)';
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${name}\u0000${where}`;
    const entry = functions.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    const origin = originOf(frame);
    origins.set(origin, (origins.get(origin) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const percentOfBusy = (us: number) => (busyUs > 0 ? (us / busyUs) * 100 : 0);
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    top: [...functions.values()]
      .filter((entry) => entry.name !== '(idle)')
      .sort((a, b) => b.us - a.us)
      .slice(0, topCount)
      .map((entry) => ({
        name: entry.name,
        where: entry.where,
        selfMs: entry.us / 1000,
        percent: percentOfBusy(entry.us),
      })),
    byOrigin: [...origins.entries()]
      .filter(([origin]) => origin !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .map(([origin, us]) => ({ origin, selfMs: us / 1000, percent: percentOfBusy(us) })),
  };
}

/** Markdown tables; with `requests`, also the self time per request (µs). */
export function formatProfileSummary(summary: ProfileSummary, originCount = 12, requests?: number): string {
  const perRequest = (ms: number) => (requests ? ` ${((ms * 1000) / requests).toFixed(0)} |` : '');
  const extraHead = requests ? ' µs/req |' : '';
  const extraRule = requests ? ' -: |' : '';
  const lines = [
    `Sampled ${summary.totalMs.toFixed(0)} ms, busy (not idle) ${summary.busyMs.toFixed(0)} ms` +
      (requests
        ? ` over ${requests} requests (${((summary.busyMs * 1000) / requests).toFixed(0)} µs busy per request)`
        : '') +
      '; percentages are of busy time.',
    '',
    `| # | self ms | % busy |${extraHead} function | where |`,
    `| -: | -: | -: |${extraRule} --- | --- |`,
    ...summary.top.map(
      (row, index) =>
        `| ${index + 1} | ${row.selfMs.toFixed(1)} | ${row.percent.toFixed(1)} |${perRequest(row.selfMs)} \`${row.name}\` | ${row.where || '—'} |`,
    ),
    '',
    `| origin (self time) | ms | % busy |${extraHead}`,
    `| --- | -: | -: |${extraRule}`,
    ...summary.byOrigin
      .slice(0, originCount)
      .map(
        (row) =>
          `| ${row.origin} | ${row.selfMs.toFixed(1)} | ${row.percent.toFixed(1)} |${perRequest(row.selfMs)}`,
      ),
  ];
  return lines.join('\n');
}

export async function readProfile(file: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    options: {
      top: { type: 'string', default: '15' },
      from: { type: 'string' },
      to: { type: 'string' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  const top = Number(values.top);
  if (!file || !Number.isSafeInteger(top) || top < 1) {
    console.error(
      'Usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 15] [--from MS] [--to MS]',
    );
    process.exit(2);
  }
  const window =
    values.from !== undefined || values.to !== undefined
      ? { fromMs: Number(values.from ?? 0), toMs: Number(values.to ?? Number.POSITIVE_INFINITY) }
      : undefined;
  console.log(formatProfileSummary(summariseProfile(await readProfile(file), top, window)));
}
