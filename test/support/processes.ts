import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { TEST_JWT_SECRET, type TestServer } from './server';
import { SERVER_NODE_FLAGS } from '../../scripts/node-flags';

/** PIDs of processes whose command line mentions `needle` (e.g. a throw-away data folder). */
export function processesMentioning(needle: string): number[] {
  const output = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return output
    .split('\n')
    .filter((line) => line.includes(needle) && !line.includes('ps -eo'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

export async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

/** `npm start`'s entry (scripts/start.ts) as its own node process (no tsx CLI parent), with the given environment. */
export function spawnServer(env: NodeJS.ProcessEnv): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'scripts/start.ts'], {
    env,
    stdio: 'pipe',
  });
}

/** Resolves with the URL the server logs once it listens; rejects if it exits first. */
export function listeningUrl(child: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)","msg":"storefront gateway listening"/.exec(output);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
  });
}

/** A server process's environment on a test database: test mode, a free port, no fixtures, info logs. */
export function serverProcessEnv(
  database: { uri: string; dbName: string; postgresUrl?: string },
  env: Record<string, string> = {},
): NodeJS.ProcessEnv {
  // Nothing of the outer environment decides which database, secret, port, folder or tracing a
  // server under test uses.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(MONGODB_|CHANGE_FEED_|JWT_|PORT$|DATA_DIR$|OTEL_)/.test(name),
    ),
  );
  return {
    ...inherited,
    NODE_ENV: 'test',
    PORT: '0',
    MONGODB_URI: database.uri,
    MONGODB_DB: database.dbName,
    CHANGE_FEED_POSTGRES_URL: database.postgresUrl ?? '',
    CHANGE_FEED_WAIT_MS: '2000',
    JWT_SECRET: TEST_JWT_SECRET,
    SEED_FIXTURES: 'false',
    LOG_LEVEL: 'info',
    ...env,
  };
}

/** Whether every server's shared store (Redis) becomes connected (`up`) or lost (`!up`) within the time. */
export function sharedStoreIs(
  up: boolean,
  servers: readonly TestServer[],
  timeoutMs = 5_000,
): Promise<boolean> {
  return waitUntil(() => servers.every((server) => Boolean(server.redis?.isReady()) === up), timeoutMs);
}

/** A process's resident memory in MB, from /proc. */
export function rssMb(pid: number | undefined): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

/** Stops a server process with SIGTERM and waits for it to exit. */
export async function stopProcess(child: ChildProcessWithoutNullStreams | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
