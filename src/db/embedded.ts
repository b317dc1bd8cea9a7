import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { ensureFerretdbBinary } from './ferretdb-build';
import { freeLoopbackPort, GUARD_SCRIPT, waitForExit } from '../guarded-child';

/**
 * The embedded development database: FerretDB on SQLite, on a free loopback port, with telemetry
 * disabled. It runs under a small `sh` guard that stops it when our stdin pipe closes, so it
 * cannot outlive this process, even when this process is killed with SIGKILL.
 */

export interface EmbeddedDatabase {
  uri: string;
  port: number;
  /** PID of the guard process; FerretDB is its only child. */
  pid: number;
  dataDir: string;
  /** Settles when FerretDB (and its guard) has exited, for whatever reason. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  startTimeoutMs?: number;
  /** A fixed loopback port (e.g. to restart on the same address); default: a free one. */
  port?: number;
  log?: (line: string) => void;
}

async function waitForPing(uri: string, child: ChildProcess, deadline: number): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error('FerretDB exited during start-up');
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 });
    try {
      await client.db('admin').command({ ping: 1 });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error('FerretDB did not answer a ping in time');
      await sleep(100);
    } finally {
      await client.close().catch(() => undefined);
    }
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function launch(binary: string, dataDir: string, port: number): Promise<ChildProcess> {
  const sqliteDir = path.join(dataDir, 'sqlite');
  const stateDir = path.join(dataDir, 'state');
  await mkdir(sqliteDir, { recursive: true });
  await mkdir(stateDir, { recursive: true });
  const logFile = createWriteStream(path.join(dataDir, 'ferretdb.log'), { flags: 'a' });
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('FERRETDB_')),
  );
  const child = spawn(
    'sh',
    [
      '-c',
      GUARD_SCRIPT,
      'ferretdb-guard',
      binary,
      '--handler=sqlite',
      `--sqlite-url=file:${sqliteDir}/`,
      `--listen-addr=127.0.0.1:${port}`,
      '--debug-addr=127.0.0.1:0',
      `--state-dir=${stateDir}`,
      '--telemetry=disable',
      '--log-level=warn',
    ],
    { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  // Two sources, one file: neither may end it (a late stderr line after stdout ended was a
  // "write after end"); it ends once every stdio stream has closed.
  child.stdout?.pipe(logFile, { end: false });
  child.stderr?.pipe(logFile, { end: false });
  child.on('close', () => logFile.end());
  // The process group is ours to stop; do not keep Node alive for it.
  child.unref();
  (child.stdout as net.Socket | null)?.unref?.();
  (child.stderr as net.Socket | null)?.unref?.();
  (child.stdin as unknown as net.Socket | null)?.unref?.();
  return child;
}

export async function startEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { dataDir, startTimeoutMs = 30_000, log = (line: string) => console.error(line) } = options;
  const binary = await ensureFerretdbBinary(log);
  await mkdir(dataDir, { recursive: true });

  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = options.port ?? (await freeLoopbackPort());
    const child = await launch(binary, dataDir, port);
    const uri = `mongodb://127.0.0.1:${port}/`;
    const onProcessExit = () => killGroup(child, 'SIGTERM');
    process.once('exit', onProcessExit);
    const exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        process.removeListener('exit', onProcessExit);
        resolve();
      }),
    );
    try {
      await waitForPing(uri, child, Date.now() + startTimeoutMs);
    } catch (error) {
      lastError = error;
      process.removeListener('exit', onProcessExit);
      killGroup(child, 'SIGKILL');
      await waitForExit(child, 5_000);
      continue;
    }

    let stopping: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        child.stdin?.end();
        killGroup(child, 'SIGTERM');
        if (!(await waitForExit(child, 10_000))) {
          killGroup(child, 'SIGKILL');
          await waitForExit(child, 5_000);
        }
        process.removeListener('exit', onProcessExit);
      })();
      return stopping;
    };
    return { uri, port, pid: child.pid ?? -1, dataDir, exited, stop };
  }
  const logTail = await readFile(path.join(dataDir, 'ferretdb.log'), 'utf8').catch(() => '');
  throw new Error(
    `The embedded database did not start: ${(lastError as Error)?.message}\n${logTail.split('\n').slice(-10).join('\n')}`,
  );
}
