import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RESULTS_DIR, timestamp } from './harness';

/** The full record of a run, as JSON in bench/results/<timestamp>.json, and the machine it ran on. */

export type Machine = ReturnType<typeof machine>;

export function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((load) => Number(load.toFixed(2))),
  };
}

/** Writes the record and answers its path; a smoke run's name says so. */
export async function writeResultsFile(startedAt: Date, smoke: boolean, record: object): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${timestamp(startedAt)}${smoke ? '-smoke' : ''}.json`);
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
  return file;
}
