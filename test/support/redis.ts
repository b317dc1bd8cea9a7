import { spawn, type ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';

/** A private redis-server on a free loopback port, no persistence; ends with the test file. */
export interface TestRedis {
  url: string;
  port: number;
  /** SIGKILL: the outage a crash causes. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was persisted). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const REDIS_SERVER = 'redis-server';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn(
      REDIS_SERVER,
      [
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
      { stdio: 'ignore' },
    );
    const spawned = child;
    for (let attempt = 0; attempt < 100; attempt++) {
      if (spawned.exitCode !== null) throw new Error(`redis-server exited with ${spawned.exitCode}`);
      if (await answersPing(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  };
  const end = async (signal: NodeJS.Signals) => {
    if (!child) return;
    const ending = exited(child);
    child.kill(signal);
    await ending;
    child = undefined;
  };
  // Never outlive the test process, whatever ends it.
  process.once('exit', () => child?.kill('SIGKILL'));
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => end('SIGKILL'),
    restart: launch,
    stop: () => end('SIGTERM'),
  };
}
