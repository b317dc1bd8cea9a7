import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freeLoopbackPort, GUARD_SCRIPT, waitForExit } from '../../src/engine/guarded-child';
import { findRedisServer, redisMissingMessage } from './redis-server';
import { startTestServer, type TestServer } from './server';

export interface TestRedis {
  url: string;
  port: number;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash: the tests' "Redis died mid-request". */
  kill(): Promise<void>;
  /** Starts a fresh (empty) Redis on the same port. */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open but nothing answers, as a Redis too slow to wait for. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
}

let redisServer: string | undefined;

/** The binary on PATH, looked up once; `npm test` has installed it (scripts/ensure-redis.ts). */
function redisServerBinary(): string {
  redisServer ??= findRedisServer();
  if (!redisServer) throw new Error(redisMissingMessage());
  return redisServer;
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

function launch(port: number, output: { text: string }): ChildProcess {
  const child = spawn(
    'sh',
    [
      '-c',
      GUARD_SCRIPT,
      'redis-guard',
      redisServerBinary(),
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
    { detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  // The last lines redis-server printed, for the error when it does not start.
  const keep = (chunk: Buffer) => (output.text = (output.text + chunk.toString()).slice(-2_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as net.Socket | null)?.unref?.();
  }
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

async function startOn(port: number): Promise<ChildProcess> {
  const output = { text: '' };
  const child = launch(port, output);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    if (await pings(port)) return child;
    await sleep(50);
  }
  killGroup(child, 'SIGKILL');
  await waitForExit(child, 2_000);
  throw new Error(`redis-server did not answer PING on port ${port}:\n${output.text}`);
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
        // The port was just freed: a busy machine may need a second attempt.
        for (let attempt = 1; ; attempt++) {
          try {
            child = await startOn(port);
            return;
          } catch (error) {
            if (attempt === 3) throw error;
            await sleep(200);
          }
        }
      },
      pause: () => killGroup(child, 'SIGSTOP'),
      resume: () => killGroup(child, 'SIGCONT'),
    };
  }
  throw lastError instanceof Error ? lastError : new Error('redis-server did not start');
}

/** A test server on a private Redis, and a client to look into that Redis; stop() ends all three. */
export async function startServerOnRedis(env: Record<string, string>) {
  const redis = await startRedis();
  let server: TestServer;
  try {
    server = await startTestServer({ env: { REDIS_URL: redis.url, ...env } });
  } catch (error) {
    await redis.stop();
    throw error;
  }
  const inspect = new Redis(redis.url);
  return {
    redis,
    server,
    inspect,
    async stop() {
      inspect.disconnect();
      await server.stop();
      await redis.stop();
    },
  };
}
