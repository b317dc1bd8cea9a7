import { execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { describeWithRedis } from '../support/describe-with-redis';
import { listeningUrl, serverProcessEnv, spawnServer } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';

/** Two server processes (npm start's entry) and one Redis: the fleet as operators run it. */

const run = promisify(execFile);
const PAGE = '/api/v1/products?per_page=3'; // products 1, 2, 3
const OTHER_PAGE = '/api/v1/products?per_page=3&page=2'; // products 4, 5, 6
const QUERY = '{ productPage(perPage: 3) { items { databaseId name } } }';

let testDb: TestDatabase;
let redis: TestRedis;
let inspector: Redis;
const children: ChildProcessWithoutNullStreams[] = [];
let first: string;
let second: string;

beforeAll(async () => {
  [testDb, redis] = await Promise.all([openTestDatabase('fleet_cache'), startRedis()]);
  await loadFixtures(testDb.db);
  inspector = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  inspector.on('error', () => undefined);
  const start = () => {
    const child = spawnServer(
      serverProcessEnv(testDb, {
        MONGODB_MAX_POOL_SIZE: '5',
        REDIS_URL: redis.url,
        PUBLIC_BASE_URL: 'https://shop.example.com',
        RESPONSE_CACHE_TTL_MS: '60000',
        // Polling, which does not see a write without updated_at: what the purge command is for
        // (with the log such a write purges by itself: test/ops/log-feed.test.ts).
        CHANGE_FEED_POSTGRES_URL: '',
      }),
    );
    children.push(child);
    return listeningUrl(child);
  };
  [first, second] = (await Promise.all([start(), start()])) as [string, string];
  await Promise.all([first, second].map((url) => storeState(url, 'ok')));
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  inspector?.disconnect();
  await redis?.stop();
  await testDb?.close();
});

async function storeState(url: string, state: 'ok' | 'degraded'): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const body = (await (await fetch(`${url}/readyz`)).json()) as { redis?: string };
    if (body.redis === state) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} never reported redis: ${state}`);
}

const rest = async (url: string, path = PAGE) => {
  const response = await fetch(`${url}${path}`, { headers: { 'accept-encoding': 'identity' } });
  return { status: response.status, cache: response.headers.get('x-cache'), body: await response.text() };
};
const graphql = async (url: string) => {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'accept-encoding': 'identity',
    },
    body: JSON.stringify({ query: QUERY }),
  });
  return { status: response.status, cache: response.headers.get('x-cache'), body: await response.text() };
};

/**
 * Asks one instance, then waits until Redis holds one more entry: the store is written after the
 * answer. Only then is the other instance asked, once (asking it twice would let it store its own).
 */
async function storedBy<T extends { cache: string | null }>(read: () => Promise<T>): Promise<T> {
  const before = (await inspector.keys('storefront:cache:entry:*')).length;
  const result = await read();
  if (result.cache === 'HIT') return result;
  for (let attempt = 0; attempt < 100; attempt++) {
    if ((await inspector.keys('storefront:cache:entry:*')).length > before) return result;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the answer was never stored');
}

const purge = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/cache-purge.ts', ...args], {
    env: { ...process.env, REDIS_URL: redis.url },
  });

describeWithRedis('a fleet of two server processes sharing one Redis', () => {
  it('serves a page cached by one process as a HIT on the other, on both APIs', async () => {
    const miss = await storedBy(() => rest(first));
    expect(miss).toMatchObject({ status: 200, cache: 'MISS' });
    expect(await rest(second)).toEqual({ ...miss, cache: 'HIT' });

    const graphqlMiss = await storedBy(() => graphql(second));
    expect(graphqlMiss).toMatchObject({ status: 200, cache: 'MISS' });
    expect(await graphql(first)).toEqual({ ...graphqlMiss, cache: 'HIT' });
  });

  it('shows a changed product on every process after a purge of it, and keeps other pages', async () => {
    await storedBy(() => rest(first, OTHER_PAGE));
    expect((await rest(second, OTHER_PAGE)).cache).toBe('HIT');
    expect((await rest(second)).cache).toBe('HIT');

    await testDb.db.collection('products').updateOne({ id: 2 }, { $set: { name: 'Renamed by the test' } });
    // Cached: the old name is still served until the purge.
    expect((await rest(first)).body).not.toContain('Renamed by the test');
    const { stdout } = await purge('--product', '2');
    expect(stdout).toMatch(/Purged [1-9]\d* cached responses holding product 2\./);

    const page = await rest(second);
    expect(page.cache).toBe('MISS');
    expect(page.body).toContain('Renamed by the test');
    const result = await graphql(first);
    expect(result.cache).toBe('MISS');
    expect(result.body).toContain('Renamed by the test');
    expect((await rest(first, OTHER_PAGE)).cache).toBe('HIT');
  });

  it('goes without a Redis that hangs (SIGSTOP), within the command timeout', async () => {
    redis.pause();
    try {
      for (const url of [first, second]) {
        const started = performance.now();
        expect(await rest(url)).toMatchObject({ status: 200, cache: 'MISS' });
        expect(await graphql(url)).toMatchObject({ status: 200, cache: 'MISS' });
        expect(performance.now() - started).toBeLessThan(1_500);
      }
    } finally {
      redis.resume();
    }
  });

  it('answers from the database while Redis is down, and shares again once it is back', async () => {
    await redis.kill();
    await Promise.all([first, second].map((url) => storeState(url, 'degraded')));
    for (const url of [first, second]) {
      expect(await rest(url)).toMatchObject({ status: 200, cache: 'MISS' });
      expect(await graphql(url)).toMatchObject({ status: 200, cache: 'MISS' });
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    }
    await redis.restart();
    await Promise.all([first, second].map((url) => storeState(url, 'ok')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await storedBy(() => rest(second));
    expect((await rest(first)).cache).toBe('HIT');
  }, 30_000);
});
