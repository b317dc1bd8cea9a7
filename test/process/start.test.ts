import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listeningUrl, processesMentioning, spawnServer } from '../support/processes';

/** `npm start` as a user runs it: the real entry point, the embedded database, signals. */

let dataDir: string;

const children: ChildProcessWithoutNullStreams[] = [];

function start(env: Record<string, string>): ChildProcessWithoutNullStreams {
  const cleanEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(MONGODB_|JWT_|PORT$|DATA_DIR$)/.test(name)),
  );
  const child = spawnServer({ ...cleanEnv, ...env });
  children.push(child);
  return child;
}

function exitCode(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

afterAll(async () => {
  // A failed assertion leaves its server running; its embedded database dies with it.
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (dataDir) {
    for (const pid of processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
});

describe('npm start', () => {
  it('serves seeded data on the embedded database and leaves no process behind on SIGTERM or SIGINT', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-start-'));
    const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info' };

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const child = start(env);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const url = await listeningUrl(child);
      const body = (await (await fetch(`${url}/api/v1/products?per_page=1`)).json()) as {
        meta: { total: number };
      };
      // Seeded once on the empty database; the second start finds the same 20 fixtures.
      expect(body.meta.total).toBe(20);
      // The start page names the database this process started.
      const startPage = (await (await fetch(`${url}/`)).json()) as { database: string };
      expect(startPage.database).toMatch(
        /^the embedded database \(FerretDB v\d+\.\d+\.\d+ with DocumentDB on PostgreSQL \d+\)/,
      );
      expect(processesMentioning(dataDir).length).toBeGreaterThan(0);
      // Nothing but our own log and start banner: no library warning (e.g. a deprecated option).
      expect(stderr).toBe('');
      expect(stdout).not.toMatch(/deprecat/i);

      const exited = exitCode(child);
      child.kill(signal);
      expect(await exited).toBe(0);
      expect(processesMentioning(dataDir)).toEqual([]);
    }
  }, 120_000);

  it('refuses a bad configuration with a message naming the variable', async () => {
    const child = start({ PORT: 'abc', LOG_LEVEL: 'loud' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitCode(child)).toBe(2);
    expect(stderr).toContain('PORT: must be a number');
    expect(stderr).toContain('LOG_LEVEL');
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses to start in production without JWT settings', async () => {
    const child = start({ NODE_ENV: 'production', PORT: '0' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitCode(child)).toBe(2);
    expect(stderr).toContain('JWT_SECRET or JWT_JWKS_URL');
  });

  it('refuses to start in production without PUBLIC_BASE_URL (links would follow the Host header)', async () => {
    const child = start({ NODE_ENV: 'production', PORT: '0', JWT_SECRET: 'x'.repeat(48) });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await exitCode(child)).toBe(2);
    expect(stderr).toContain('PUBLIC_BASE_URL: required when NODE_ENV=production');
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
