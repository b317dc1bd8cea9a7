import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface TestRedis {
  url: string;
  port: number;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash: the tests' "Redis died mid-request". */
  kill(): Promise<void>;
  /** Starts a fresh (empty) Redis on the same port. */
  restart(): Promise<void>;
}

const REDIS_SERVER = '/usr/bin/redis-server';

// As src/db/embedded.ts does for FerretDB: a small `sh` guard that stops redis-server when our
// stdin pipe closes, so it cannot outlive this test process, even one killed with SIGKILL.
const GUARD_SCRIPT = `
exec 3<&0
"$@" </dev/null &
server=$!
( while read -r _ <&3; do :; done; kill -TERM "$server" 2>/dev/null ) &
watcher=$!
trap 'kill -TERM "$server" 2>/dev/null' TERM INT
status=0
while kill -0 "$server" 2>/dev/null; do wait "$server"; status=$?; done
kill "$watcher" 2>/dev/null
exit $status
`;

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves true when the server answers PING with PONG. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk: Buffer) => done(chunk.toString().startsWith('+PONG')));
  });
}

function launch(port: number): ChildProcess {
  const child = spawn(
    'sh',
    [
      '-c',
      GUARD_SCRIPT,
      'redis-guard',
      REDIS_SERVER,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--loglevel',
      'warning',
    ],
    { detached: true, stdio: ['pipe', 'ignore', 'ignore'] },
  );
  child.unref();
  (child.stdin as unknown as net.Socket | null)?.unref?.();
  return child;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function startOn(port: number): Promise<ChildProcess> {
  const child = launch(port);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    if (await pings(port)) return child;
    await sleep(50);
  }
  killGroup(child, 'SIGKILL');
  await waitForExit(child, 2_000);
  throw new Error(`redis-server did not answer PING on port ${port}`);
}

/** A private, empty, non-persistent redis-server on a free loopback port. Stop it in afterAll. */
export async function startRedis(): Promise<TestRedis> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freeLoopbackPort();
    let child: ChildProcess;
    try {
      child = await startOn(port);
    } catch (error) {
      lastError = error;
      continue;
    }
    const onProcessExit = () => killGroup(child, 'SIGKILL');
    process.on('exit', onProcessExit);
    const end = async (signal: NodeJS.Signals) => {
      child.stdin?.end();
      killGroup(child, signal);
      if (!(await waitForExit(child, 5_000))) {
        killGroup(child, 'SIGKILL');
        await waitForExit(child, 2_000);
      }
    };
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      async stop() {
        await end('SIGTERM');
        process.removeListener('exit', onProcessExit);
      },
      kill: () => end('SIGKILL'),
      async restart() {
        await end('SIGKILL');
        child = await startOn(port);
      },
    };
  }
  throw lastError instanceof Error ? lastError : new Error('redis-server did not start');
}
