import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { capturedLog } from '../support/captured-log';
import { describeWithRedis } from '../support/describe-with-redis';
import { startRedis, type TestRedis } from '../support/redis';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/** Two instances of one deployment (one database, one Redis), as behind a load balancer. */

const run = promisify(execFile);
let redis: TestRedis;
let a: TestServer;
let b: TestServer;
let inspector: Redis;
const { logger: loggerOfA, lines: logLines } = capturedLog();

const PAGE_1 = '/api/v1/products?per_page=3'; // products 1, 2, 3
const PAGE_2 = '/api/v1/products?per_page=3&page=2'; // products 4, 5, 6
const PRODUCT_2_QUERY = '{ products(first: 2) { edges { node { databaseId name } } } }';

async function sharedStoreState(server: TestServer): Promise<string | undefined> {
  const body = (await (await server.request('/readyz')).json()) as { redis?: string };
  return body.redis;
}

async function waitForStore(server: TestServer, state: 'ok' | 'degraded'): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await sharedStoreState(server)) !== state) {
    if (Date.now() > deadline) throw new Error(`shared store never became ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The number of response entries in Redis. Entries are written in the background, so a test waits
 * for the count to grow before asking the other instance: one request there must then be a HIT
 * (asking it again would let it store its own copy, and prove nothing).
 */
async function storedEntries(): Promise<number> {
  const keys = await inspector.keys('storefront:cache:entry:*');
  return keys.length;
}

async function cachedByOne(server: TestServer, path: string, init?: RequestInit): Promise<Response> {
  const before = await storedEntries();
  const response = await server.request(path, init);
  await response.arrayBuffer();
  if (response.headers.get('x-cache') === 'HIT') return response;
  const grew = await waitUntilAsync(async () => (await storedEntries()) > before, 2_000);
  if (!grew) throw new Error(`${path} was not stored`);
  return response;
}

async function waitUntilAsync(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/** A GraphQL GET as a non-browser client sends it: CSRF prevention wants one of its headers. */
const GET_HEADERS = { accept: 'application/json', 'x-graphql-yoga-csrf': '1' };
const graphqlGet = (query: string) => `/graphql?query=${encodeURIComponent(query)}`;
const purge = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/cache-purge.ts', ...args], {
    env: { ...process.env, REDIS_URL: redis.url },
  });

beforeAll(async () => {
  redis = await startRedis();
  inspector = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  inspector.on('error', () => undefined);
  const env = {
    REDIS_URL: redis.url,
    RESPONSE_CACHE_TTL_MS: '60000',
    // One public address for the fleet: the instances' pages (and so their cache keys) are the same.
    PUBLIC_BASE_URL: 'https://shop.example',
  };
  a = await startTestServer({ env, logger: loggerOfA });
  b = await startTestServer({ env, database: a.testDb });
  await Promise.all([waitForStore(a, 'ok'), waitForStore(b, 'ok')]);
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  inspector?.disconnect();
  await redis?.stop();
});

describeWithRedis('a shared response cache (two instances, one Redis)', () => {
  it('serves a REST page cached by one instance as a HIT on the other, with HTTP caching headers', async () => {
    const first = await a.request(PAGE_2);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const body = await first.text();
    await waitUntilAsync(async () => (await storedEntries()) > 0, 2_000);
    const other = await b.request(PAGE_2);
    expect(other.headers.get('x-cache')).toBe('HIT');
    expect(await other.text()).toBe(body);
    for (const response of [first, other]) {
      expect(response.headers.get('cache-control')).toBe('public, max-age=10, stale-while-revalidate=30');
      expect(response.headers.get('vary')).toBe('Accept-Encoding');
    }
    expect(other.headers.get('etag')).toBe(first.headers.get('etag'));

    const revalidated = await b.request(PAGE_2, { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('x-cache')).toBe('HIT');
  });

  it('serves a GraphQL result cached by one instance as a HIT on the other, and GET reads get ETag/304', async () => {
    const query = '{ categories { name productCount } }';
    const entries = await storedEntries();
    const first = await a.request(graphqlGet(query), { headers: GET_HEADERS });
    expect(first.headers.get('x-cache')).toBe('MISS');
    const body = (await first.json()) as { data: unknown; extensions?: unknown };
    expect(body.extensions).toBeUndefined();
    await waitUntilAsync(async () => (await storedEntries()) > entries, 2_000);
    const other = await b.request(graphqlGet(query), { headers: GET_HEADERS });
    expect(other.headers.get('x-cache')).toBe('HIT');
    expect(await other.json()).toEqual(body);
    expect(other.headers.get('cache-control')).toBe('public, max-age=10, stale-while-revalidate=30');
    expect(other.headers.get('vary')).toBe('Accept, Accept-Encoding');
    const etag = other.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('etag')).toBe(etag);

    const revalidated = await a.request(graphqlGet(query), {
      headers: { ...GET_HEADERS, 'if-none-match': etag! },
    });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe('');

    const posted = await b.graphql(query);
    expect(posted.body).toEqual(body);
  });

  it('looks an uncacheable GraphQL read up once per request, not once per cache layer', async () => {
    const gets = async () => {
      const stats = await inspector.info('commandstats');
      return Number(/cmdstat_get:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    };
    const token = bearer(await mintToken({ sub: 'lookup-counter' }));
    const before = await gets();
    for (let round = 0; round < 3; round++) {
      const reply = await a.graphql('{ viewer { customerId } }', {}, token);
      expect(reply.body).toEqual({ data: { viewer: { customerId: 'lookup-counter' } } });
    }
    expect((await gets()) - before).toBe(3);
  });

  it('keeps orders private: no-store on both APIs, never served from the cache', async () => {
    const token = await mintToken({ sub: 'cus_alice' });
    const rest = await a.request('/api/v1/orders/01KE78KGFSQ4ZC7N2XW8RTB3MD', { headers: bearer(token) });
    expect(rest.status).toBe(200);
    expect(rest.headers.get('cache-control')).toBe('private, no-store');
    expect(rest.headers.get('x-cache')).toBeNull();
    const denied = await a.request('/api/v1/orders/01KE78KGFSQ4ZC7N2XW8RTB3MD');
    expect(denied.status).toBe(401);
    expect(denied.headers.get('cache-control')).toBe('private, no-store');

    const query = '{ viewer { orders(first: 2) { edges { node { ulid } } } } }';
    for (const server of [a, b, a]) {
      const response = await server.request('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(token) },
        body: JSON.stringify({ query }),
      });
      expect(response.headers.get('x-cache')).toBe('MISS');
      expect(response.headers.get('cache-control')).toBe('private, no-store');
    }
  });

  it('purges the pages holding one product on every instance, and everything with --all', async () => {
    for (const path of [PAGE_1, PAGE_2, graphqlGet(PRODUCT_2_QUERY)]) {
      await cachedByOne(a, path, { headers: GET_HEADERS });
      const other = await b.request(path, { headers: GET_HEADERS });
      expect(other.headers.get('x-cache')).toBe('HIT');
    }
    const { stdout } = await purge('--product', '2');
    expect(stdout).toMatch(/Purged [1-9]\d* cached responses holding product 2\./);
    // Page 1 and the GraphQL list hold product 2: gone for both instances. Page 2 does not.
    expect((await a.request(PAGE_1)).headers.get('x-cache')).toBe('MISS');
    expect(
      (await a.request(graphqlGet(PRODUCT_2_QUERY), { headers: GET_HEADERS })).headers.get('x-cache'),
    ).toBe('MISS');
    expect((await b.request(PAGE_2)).headers.get('x-cache')).toBe('HIT');

    await purge('--all');
    expect((await b.request(PAGE_2)).headers.get('x-cache')).toBe('MISS');
  });

  it('refuses a purge without REDIS_URL or with a bad id, exit code 2', async () => {
    const noRedis = run(process.execPath, ['--import', 'tsx', 'scripts/cache-purge.ts', '--all'], {
      env: { ...process.env, REDIS_URL: '' },
    });
    await expect(noRedis).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('REDIS_URL is not set'),
    });
    await expect(purge('--product', '1e3')).rejects.toMatchObject({ code: 2 });
    await expect(purge('--product', '1', '--all')).rejects.toMatchObject({ code: 2 });
  });

  it('says once, at info, that it follows the products through the engine log, and serves on', () => {
    const notices = logLines.filter((line) => String(line.msg).includes('following the products'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ level: 30, mode: 'log' });
    expect(logLines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });

  it('keeps answering when Redis dies (MISS, /readyz ready but degraded) and shares again when it returns', async () => {
    await redis.kill();
    await Promise.all([waitForStore(a, 'degraded'), waitForStore(b, 'degraded')]);
    const ready = await a.request('/readyz');
    expect(ready.status).toBe(200);
    for (const server of [a, b]) {
      const started = Date.now();
      const rest = await server.request(PAGE_2);
      expect(rest.status).toBe(200);
      expect(rest.headers.get('x-cache')).toBe('MISS');
      const graphql = await server.graphql(PRODUCT_2_QUERY);
      expect(graphql.status).toBe(200);
      expect(graphql.body.errors).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(2_000);
    }

    await redis.restart();
    await Promise.all([waitForStore(a, 'ok'), waitForStore(b, 'ok')]);
    await cachedByOne(a, PAGE_2);
    expect((await b.request(PAGE_2)).headers.get('x-cache')).toBe('HIT');
  });
});
