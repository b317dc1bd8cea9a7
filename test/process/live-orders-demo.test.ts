import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNNING_FILE } from '../../src/engine';
import { listeningUrl, processesMentioning, spawnServer, stopProcess } from '../support/processes';
import { subscribe } from '../support/sse';

/**
 * The README's live-orders demo as a person runs it: `npm start` on a data folder; in a second
 * terminal `npm run token`, the `curl -N` subscription, and `npm run simulate -- --ulid …` with no
 * MONGODB_URI, which finds the server's database by itself.
 */

const ULID = '01KE78KGFSQ4ZC7N2XW8RTB3MD';
let dataDir: string | undefined;
const children: ChildProcessWithoutNullStreams[] = [];

/** The environment of a terminal on this data folder: nothing names a database, secret or port. */
function terminalEnv(folder: string): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(MONGODB_|JWT_|PORT$|DATA_DIR$|OTEL_)/.test(name)),
  );
  return { ...inherited, DATA_DIR: folder };
}

/** An npm script's entry in its own node process; resolves with its exit code and output. */
function runScript(script: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env, stdio: 'pipe' });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const lines: { at: number; line: string }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push({ at: Date.now(), line });
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, lines, exited };
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (dataDir) {
    for (const pid of processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
});

describe('the live-orders demo in two terminals', () => {
  let server: ChildProcessWithoutNullStreams;
  let url: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-demo-'));
    env = terminalEnv(dataDir);
    server = spawnServer({ ...env, PORT: '0', LOG_LEVEL: 'info' });
    children.push(server);
    url = await listeningUrl(server);
  }, 120_000);

  it('npm run simulate finds the running npm start’s database, and the subscription sees each step', async () => {
    const folder = dataDir!;
    // Published while it runs: the database's address and the server's PID.
    const published = JSON.parse(await readFile(path.join(folder, 'db', RUNNING_FILE), 'utf8')) as {
      uri: string;
      pid: number;
    };
    expect(published.pid).toBe(server.pid);
    expect(published.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);

    const token = await runScript('scripts/token.ts', ['--sub', 'cus_alice'], env).exited;
    expect(token.code).toBe(0);
    const subscription = await subscribe(
      url,
      `subscription { order(ulid: "${ULID}") { ulid fulfillmentStatus } }`,
      {},
      { authorization: `Bearer ${token.stdout.trim()}` },
    );
    expect(subscription.status).toBe(200);
    const statuses = () =>
      subscription.results.map(
        (result) => (result.data?.order as { fulfillmentStatus?: string } | undefined)?.fulfillmentStatus,
      );
    await subscription.waitFor((results) => results.length === 1);
    expect(statuses()).toEqual(['COMPLETED']);

    const started = Date.now();
    const simulate = runScript('scripts/simulate.ts', ['--ulid', ULID], env);
    const result = await simulate.exited;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(simulate.lines[0]?.line).toBe(
      `Using the embedded database of npm start (PID ${server.pid}) at ${published.uri} (${path.join(folder, 'db')}).`,
    );
    // Its first step within seconds (it waited 17 s and failed while npm start held the folder).
    const firstStep = simulate.lines.find(({ line }) => line.includes(`${ULID}  pending`));
    expect(firstStep).toBeDefined();
    expect(firstStep!.at - started).toBeLessThan(5_000);

    await subscription.waitFor((results) => results.length >= 5, 15_000);
    expect(statuses()).toEqual(['COMPLETED', 'PENDING', 'PROCESSING', 'PARTIALLY_FULFILLED', 'COMPLETED']);
    subscription.close();
  }, 60_000);

  it('works as the start page shows it: its lines, run in a shell, print each step as an event', async () => {
    const { liveOrdersCommands } = (await (await fetch(`${url}/`)).json()) as {
      liveOrdersCommands: string[];
    };
    const shell = spawn('sh', ['-c', liveOrdersCommands.join('\n')], { env, stdio: 'pipe' });
    children.push(shell);
    let output = '';
    shell.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    shell.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise((resolve) => shell.once('exit', resolve));
    expect(code, output).toBe(0);
    expect(output).toContain(`Using the embedded database of npm start (PID ${server.pid})`);
    const events = [...output.matchAll(/"fulfillmentStatus":"(\w+)"/g)].map((match) => match[1]);
    expect(events, output).toEqual([
      'COMPLETED',
      'PENDING',
      'PROCESSING',
      'PARTIALLY_FULFILLED',
      'COMPLETED',
    ]);
  }, 60_000);

  it('npm run seed, search:index and db find it too, and say so in their first line', async () => {
    const { uri } = JSON.parse(await readFile(path.join(dataDir!, 'db', RUNNING_FILE), 'utf8')) as {
      uri: string;
    };
    const using = `Using the embedded database of npm start (PID ${server.pid}) at ${uri}`;
    for (const [script, args] of [
      ['scripts/search-index.ts', []],
      ['scripts/seed.ts', ['--fixtures']],
    ] as const) {
      const run = runScript(script, [...args], env);
      const { code, stderr } = await run.exited;
      expect(code, `${script}: ${stderr}`).toBe(0);
      expect(run.lines[0]?.line, script).toContain(using);
    }
    const db = runScript('scripts/db.ts', [], env);
    const { code, stdout } = await db.exited;
    expect(code).toBe(0);
    expect(stdout).toContain(`MONGODB_URI=${uri}\n`);
    expect(stdout).toContain(`already runs, in npm start (PID ${server.pid})`);
    // The server still serves what seed loaded.
    const body = (await (await fetch(`${url}/api/v1/products?per_page=1`)).json()) as {
      meta: { total: number };
    };
    expect(body.meta.total).toBe(20);
  }, 60_000);

  it('withdraws the address when the server stops', async () => {
    await stopProcess(server);
    expect(server.exitCode).toBe(0);
    await expect(readFile(path.join(dataDir!, 'db', RUNNING_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 60_000);
});
