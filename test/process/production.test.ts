import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/engine';
import { listeningUrl, processesMentioning, spawnServer } from '../support/processes';
import { TEST_JWT_SECRET } from '../support/server';

/** `npm start` with NODE_ENV=production: no development tooling, no sample data. */

const dirs: string[] = [];
let database: EmbeddedDatabase | undefined;

async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `storefront-${label}-`));
  dirs.push(dir);
  return dir;
}

function start(env: Record<string, string>): ChildProcessWithoutNullStreams {
  const cleanEnv = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(MONGODB_|JWT_|PORT$|DATA_DIR$|SEED_FIXTURES$|NODE_ENV$)/.test(name),
    ),
  );
  return spawnServer({
    ...cleanEnv,
    NODE_ENV: 'production',
    JWT_SECRET: TEST_JWT_SECRET,
    PUBLIC_BASE_URL: 'https://shop.example.com',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
}

function exitCode(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = exitCode(child);
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
}

beforeAll(async () => {
  database = await startEmbeddedDatabase({ dataDir: path.join(await tempDir('production-db'), 'db') });
}, 60_000);

afterAll(async () => {
  await database?.stop();
  for (const dir of dirs) {
    for (const pid of processesMentioning(dir)) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});

describe('a production start', () => {
  it('without MONGODB_URI exits with 2, one line naming it, and starts no embedded database', async () => {
    const dataDir = await tempDir('production-data');
    const child = start({ DATA_DIR: dataDir });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    expect(await exitCode(child)).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('MONGODB_URI');
    expect(stdout).toBe('');
    // Nothing was built, launched or written for an embedded database.
    expect(processesMentioning(dataDir)).toEqual([]);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('on an empty database leaves it empty, and loads the fixtures only when SEED_FIXTURES=true', async () => {
    const uri = database!.uri;
    const client = await MongoClient.connect(uri);
    try {
      const db = client.db('production_empty');
      const dataDir = await tempDir('production-data');
      const env = { MONGODB_URI: uri, MONGODB_DB: 'production_empty', DATA_DIR: dataDir };

      const child = start(env);
      const url = await listeningUrl(child);
      const page = (await (await fetch(`${url}/api/v1/products`)).json()) as { meta: { total: number } };
      expect(page.meta.total).toBe(0);
      await stop(child);
      expect(await db.collection('products').countDocuments()).toBe(0);
      expect(await db.collection('orders').countDocuments()).toBe(0);

      const asked = start({ ...env, SEED_FIXTURES: 'true' });
      await listeningUrl(asked);
      await stop(asked);
      expect(await db.collection('products').countDocuments()).toBe(20);
    } finally {
      await client.close();
    }
  }, 90_000);
});
