import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const tsx = path.join(root, 'node_modules/.bin/tsx');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function seedCli(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(tsx, ['scripts/seed.ts', ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm run seed (scripts/seed.ts)', () => {
  it('generates the requested counts into the configured database', { timeout: 120_000 }, async () => {
    const uri = inject('mongoUri');
    const dbName = `seed_cli_${randomBytes(4).toString('hex')}`;
    const client = new MongoClient(uri);
    try {
      const outcome = await seedCli(['--products', '2000', '--orders', '500', '--seed', '7'], {
        MONGODB_URI: uri,
        MONGODB_DB: dbName,
      });
      expect(outcome.stderr).not.toMatch(/failed/);
      expect(outcome.code).toBe(0);
      // Not a terminal: progress lines instead of a bar, then the summary with the rate.
      expect(outcome.stdout).toMatch(/seeding: 100% \(2,500\/2,500 documents\)/);
      expect(outcome.stdout).toMatch(/2,000 products, 500 orders in [\d.]+ s \([\d,]+ docs\/s\)/);
      expect(outcome.stdout).toContain('Generated data replaced the fixtures');

      const db = client.db(dbName);
      expect(await db.collection('products').countDocuments({})).toBe(2000);
      expect(await db.collection('orders').countDocuments({})).toBe(500);
      const indexes = (await db.collection('orders').listIndexes().toArray()).map((index) => index.name);
      expect(indexes).toContain('customer_id_1');
    } finally {
      await client
        .db(dbName)
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    }
  });

  it('ends the fixtures load with customers, their order ULIDs and the token command', async () => {
    const uri = inject('mongoUri');
    const dbName = `seed_cli_${randomBytes(4).toString('hex')}`;
    const client = new MongoClient(uri);
    try {
      // PUBLIC_BASE_URL is the public address (a proxy's): the try-it line names where the server listens.
      const outcome = await seedCli([], {
        MONGODB_URI: uri,
        MONGODB_DB: dbName,
        PORT: '4321',
        HOST: '0.0.0.0',
        PUBLIC_BASE_URL: 'https://shop.example.com',
      });
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).not.toContain('Generated data replaced the fixtures');
      const alice = (await client
        .db(dbName)
        .collection('orders')
        .find({ customer_id: 'cus_alice' })
        .toArray()) as unknown as { ulid: string }[];
      const line = outcome.stdout.split('\n').find((text) => text.trim().startsWith('cus_alice'));
      const shown = line?.trim().split(/\s+/).slice(1) ?? [];
      expect(shown.length).toBeGreaterThan(0);
      for (const ulid of shown) expect(alice.map((order) => order.ulid)).toContain(ulid);
      expect(outcome.stdout).toContain('npm run -s token -- --sub ');
      expect(outcome.stdout).toMatch(/http:\/\/127\.0\.0\.1:4321\/api\/v1\/orders\/[0-9A-Z]{26}/);
    } finally {
      await client
        .db(dbName)
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    }
  });

  it('rejects bad arguments with exit code 2 and the usage', async () => {
    const bad = await seedCli(['--products', 'lots'], { MONGODB_URI: 'mongodb://127.0.0.1:1/' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--products must be a whole number');
    expect(bad.stderr).toContain('Usage: npm run seed');

    const unknown = await seedCli(['--prodcuts', '5'], { MONGODB_URI: 'mongodb://127.0.0.1:1/' });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--prodcuts'/);

    const tooBig = await seedCli(['--batch-size', '9000'], { MONGODB_URI: 'mongodb://127.0.0.1:1/' });
    expect(tooBig.code).toBe(2);
  });

  it('prints the usage for --help', async () => {
    const help = await seedCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--products N');
  });

  it('fails with exit code 1 and a clear message when the database is unreachable', async () => {
    const outcome = await seedCli(['--products', '10'], {
      MONGODB_URI: 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=500',
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^seed: failed: /m);
  });
});
