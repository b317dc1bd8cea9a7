import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithRedis } from '../support/describe-with-redis';
import { sharedStoreIs } from '../support/processes';
import { startServerOnRedis } from '../support/redis';
import type { TestServer } from '../support/server';

/**
 * What a client can make the fleet keep in Redis: unique 32 kB registrations (padding in a
 * comment) were each kept 24 h, +283 MB in 20 s. Now documents are capped (comments count), each
 * client and the fleet register a bounded number a minute, and they expire within an hour.
 */
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const HOUR_MS = 60 * 60 * 1000;

let fixture: Awaited<ReturnType<typeof startServerOnRedis>> | undefined;
let server: TestServer;
let inspect: Redis;

beforeAll(async () => {
  fixture = await startServerOnRedis({ PERSISTED_OPERATIONS: 'apq' });
  ({ server, inspect } = fixture);
  expect(await sharedStoreIs(true, [server])).toBe(true);
});

afterAll(() => fixture?.stop());

async function register(query: string): Promise<number> {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      query,
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256(query) } },
    }),
  });
  const body = (await response.json()) as { errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return response.status;
}

const padded = (index: number, bytes: number) =>
  `# ${index} ${'x'.repeat(bytes - 60)}\n{ productPage(perPage: 1) { total } }`;

const storedKeys = () => inspect.keys('apq:*');

describeWithRedis('automatic persisted queries in Redis', () => {
  it('keeps no document over the size cap, comments included (it still runs)', async () => {
    expect(await register(padded(0, 32 * 1024))).toBe(200);
    expect(await storedKeys()).toEqual([]);
  });

  it('keeps a bounded number of registrations per client, each for at most an hour', async () => {
    const before = Number(/used_memory:(\d+)/.exec(await inspect.info('memory'))?.[1]);
    for (let index = 1; index <= 60; index++) expect(await register(padded(index, 15 * 1024))).toBe(200);
    const keys = await storedKeys();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.length).toBeLessThanOrEqual(10);
    for (const key of keys) expect(await inspect.pttl(key)).toBeLessThanOrEqual(HOUR_MS);
    const after = Number(/used_memory:(\d+)/.exec(await inspect.info('memory'))?.[1]);
    // Before: 60 × 15 kB kept (~1 MB); now at most 10 of them.
    expect(after - before).toBeLessThan(400 * 1024);
  });
});
