import { readFileSync, unlinkSync } from 'node:fs';
import { readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A database folder's `running.json`: the address of the embedded database that a long-lived
 * process (`npm start`, `npm run db`) runs on the folder, written when it has started and removed
 * when it stops. A second PostgreSQL cannot start on the same folder, so the tools that work on
 * the database (`npm run simulate`, `seed`, `search:index`) read this file and use the running
 * one. A file left by a killed process names a PID that is gone, or since reused by another
 * process (its start time differs): it is ignored.
 */

export const RUNNING_FILE = 'running.json';

export interface RunningDatabase {
  uri: string;
  /** The process that owns the database (and stops it). */
  pid: number;
  /** Who that is, in words a person recognises: "npm start", "npm run db". */
  owner: string;
  /** The owner's start time as the kernel counts it (/proc/<pid>/stat), to tell a reused PID apart. */
  startTicks?: string;
}

/** Field 22 of /proc/<pid>/stat, the process's start time; undefined where there is no /proc. */
function startTicksOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parse(text: string): RunningDatabase | undefined {
  try {
    const value = JSON.parse(text) as Partial<RunningDatabase>;
    if (typeof value.uri !== 'string' || !value.uri.startsWith('mongodb://')) return undefined;
    if (!Number.isInteger(value.pid) || (value.pid as number) <= 0) return undefined;
    return {
      uri: value.uri,
      pid: value.pid as number,
      owner: typeof value.owner === 'string' ? value.owner : 'another process',
      startTicks: typeof value.startTicks === 'string' ? value.startTicks : undefined,
    };
  } catch {
    return undefined;
  }
}

/** The database a live process has published in `dataDir`, if any. */
export async function findRunningDatabase(dataDir: string): Promise<RunningDatabase | undefined> {
  const text = await readFile(path.join(dataDir, RUNNING_FILE), 'utf8').catch(() => undefined);
  const running = text === undefined ? undefined : parse(text);
  if (!running || !isAlive(running.pid)) return undefined;
  if (running.startTicks !== undefined && startTicksOf(running.pid) !== running.startTicks) return undefined;
  return running;
}

/**
 * Publishes this process's database in `dataDir` (written whole, then renamed into place) and
 * returns what withdraws it. Withdrawn on a normal exit too; after a SIGKILL the PID check above
 * tells the file is stale.
 */
export async function publishRunningDatabase(
  dataDir: string,
  { uri, owner }: { uri: string; owner: string },
): Promise<() => Promise<void>> {
  const file = path.join(dataDir, RUNNING_FILE);
  const running: RunningDatabase = { uri, pid: process.pid, owner, startTicks: startTicksOf(process.pid) };
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, `${JSON.stringify(running)}\n`);
  await rename(partial, file);

  // Only our own file is removed: another owner may have published since (after we were stopped).
  const ours = (text: string | undefined) => text !== undefined && parse(text)?.pid === process.pid;
  const onExit = () => {
    try {
      if (ours(readFileSync(file, 'utf8'))) unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
  process.once('exit', onExit);
  let withdrawn: Promise<void> | undefined;
  return () =>
    (withdrawn ??= (async () => {
      process.removeListener('exit', onExit);
      if (ours(await readFile(file, 'utf8').catch(() => undefined)))
        await unlink(file).catch(() => undefined);
    })());
}
