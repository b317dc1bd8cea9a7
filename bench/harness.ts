import path from 'node:path';

/** Where `npm run bench` keeps its data and results, and how it reports progress (on stderr). */

export const BENCH_DIR = path.join(process.cwd(), 'bench');
export const DATA_DIR = path.join(BENCH_DIR, '.data');
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');

export const log = (line: string) => console.error(`[bench] ${line}`);

/** A file-name-safe UTC time, e.g. 2026-11-25T04-23-13Z. */
export function timestamp(date: Date): string {
  return date
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d{3}Z$/, 'Z');
}
