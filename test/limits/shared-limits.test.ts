import { Redis } from 'ioredis';
import { parse } from 'graphql';
import { estimateCost } from '../../src/graphql-cost';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeWithRedis } from '../support/describe-with-redis';
import { sharedStoreIs } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/** Two instances sharing one private Redis: every limit is counted across both. */

const PRODUCTS_QUERY = '{ products(first: 1) { edges { node { id } } } }';
const REST_PATH = '/api/v1/products?per_page=1';

async function graphql(server: TestServer, headers: Record<string, string> = {}, query = PRODUCTS_QUERY) {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return {
    response,
    body: (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] },
  };
}

const rest = (server: TestServer, headers: Record<string, string> = {}) =>
  server.request(REST_PATH, { headers });

function expectRateLimited(response: Response, limit: number) {
  expect(response.status).toBe(429);
  expect(response.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(response.headers.get('ratelimit-remaining')).toBe('0');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(response.headers.get('ratelimit-reset')).toBe(String(retryAfter));
  expect(response.headers.get('ratelimit-policy')).toBe(`${limit};w=60`);
}

describeWithRedis('request limits shared by two instances', () => {
  let redis: TestRedis;
  let flusher: Redis;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    redis = await startRedis();
    flusher = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    flusher.on('error', () => undefined);
    const env = { REDIS_URL: redis.url, RATE_LIMIT_REQUESTS_PER_MINUTE: '5' };
    [a, b] = await Promise.all([startTestServer({ env }), startTestServer({ env })]);
    expect(await sharedStoreIs(true, [a, b])).toBe(true);
  });

  afterEach(async () => {
    await flusher.flushall().catch(() => undefined);
  });

  afterAll(async () => {
    flusher?.disconnect();
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  it('counts 3 requests on A and 2 on B, then refuses the 6th on either API with 429 and the headers', async () => {
    const remaining: string[] = [];
    for (const server of [a, a, a]) remaining.push((await rest(server)).headers.get('ratelimit-remaining')!);
    for (const server of [b, b]) {
      const { response, body } = await graphql(server);
      expect(body.errors).toBeUndefined();
      remaining.push(response.headers.get('ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const refusedRest = await rest(b);
    expectRateLimited(refusedRest, 5);
    expect(refusedRest.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await refusedRest.text()).toBe('{"message":"Too Many Attempts."}');

    const refusedGraphql = await graphql(a);
    expectRateLimited(refusedGraphql.response, 5);
    expect(refusedGraphql.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(refusedGraphql.body.data).toBeUndefined();
  });

  it('keys an authenticated client by its token subject and everyone else by address', async () => {
    const alice = bearer(await mintToken({ sub: 'alice' }));
    const bob = bearer(await mintToken({ sub: 'bob' }));
    for (let i = 0; i < 5; i++) expect((await rest(i % 2 ? a : b, alice)).status).toBe(200);
    expect((await rest(a, alice)).status).toBe(429);
    expect((await graphql(b, alice)).response.status).toBe(429);
    // Another subject and the anonymous address have budgets of their own.
    expect((await rest(a, bob)).headers.get('ratelimit-remaining')).toBe('4');
    expect((await rest(b)).headers.get('ratelimit-remaining')).toBe('4');
    // An invalid token (wrong secret) is not a subject: it counts against the address.
    const forged = bearer(
      await mintToken({ sub: 'alice', secret: 'another-secret-that-is-at-least-32-chars' }),
    );
    const answer = await graphql(a, forged, '{ viewerOrders: orders(first: 1) { totalCount } }');
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(answer.response.headers.get('ratelimit-remaining')).toBe('3');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    for (let i = 1; i <= 5; i++) {
      expect((await rest(a, { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(200);
    }
    expect((await rest(b, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(429);
  });

  it('does not count health checks or metrics; counts GraphiQL and the docs like any request', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      for (let i = 0; i < 3; i++) expect((await a.request(path)).status).toBe(200);
    }
    expect((await rest(b)).headers.get('ratelimit-remaining')).toBe('4');
    // A 9 MB page is not free: before, GraphiQL was never counted.
    const graphiql = await a.request('/graphql', { headers: { accept: 'text/html' } });
    expect(graphiql.status).toBe(200);
    expect(graphiql.headers.get('ratelimit-remaining')).toBe('3');
    // Nor is a 1.7 MB script: before, /docs and its assets were never counted (issue 28 row 5).
    for (const path of ['/docs', '/docs/assets/swagger-ui-bundle.js', '/api/v1/openapi.json']) {
      await (await b.request(path)).arrayBuffer();
    }
    const refused = await a.request('/docs/assets/swagger-ui-bundle.js');
    expectRateLimited(refused, 5);
    expect(await refused.json()).toEqual({ message: 'Too Many Attempts.' });
  });

  it('does not wait on a Redis that stops answering (CLIENT PAUSE): the request is counted per process', async () => {
    // Its own subject: what the instances count alone meanwhile stays out of the other tests.
    const dave = bearer(await mintToken({ sub: 'dave' }));
    await flusher.client('PAUSE', 3_000, 'ALL');
    try {
      for (const server of [a, b]) {
        const started = Date.now();
        const answer = await rest(server, dave);
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit-limit')).toBe('5');
        // The command timeout is 150 ms (one retry at most): far below the 3 s pause.
        expect(Date.now() - started).toBeLessThan(1_500);
        expect((await graphql(server, dave)).response.status).toBe(200);
      }
    } finally {
      await flusher.client('UNPAUSE');
    }
  });

  it('keeps both APIs answering while Redis is dead (fail open) and shares the count again when it returns', async () => {
    await redis.kill();
    expect(await sharedStoreIs(false, [a, b])).toBe(true);
    // Each instance now counts alone (the in-process insurance): 4 requests each stay within 5.
    for (const server of [a, b]) {
      for (let i = 0; i < 2; i++) {
        const started = Date.now();
        expect((await rest(server)).status).toBe(200);
        expect((await graphql(server)).response.status).toBe(200);
        expect(Date.now() - started).toBeLessThan(2_000);
      }
    }
    await redis.restart();
    expect(await sharedStoreIs(true, [a, b], 10_000)).toBe(true);
    expect(
      (await rest(a, bearer(await mintToken({ sub: 'carol' })))).headers.get('ratelimit-remaining'),
    ).toBe('4');
    expect(
      (await rest(b, bearer(await mintToken({ sub: 'carol' })))).headers.get('ratelimit-remaining'),
    ).toBe('3');
  });
});

describe('client addresses behind a trusted proxy', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      fixtures: false,
      env: { RATE_LIMIT_REQUESTS_PER_MINUTE: '2', TRUSTED_PROXIES: '127.0.0.1/8' },
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  /** The status of one REST request forwarded for `address` by the (trusted) proxy. */
  const statusFor = async (address: string) => (await rest(server, { 'x-forwarded-for': address })).status;

  it('counts each forwarded client on its own, per process without REDIS_URL', async () => {
    expect(await statusFor('203.0.113.1')).toBe(200);
    expect(await statusFor('203.0.113.1')).toBe(200);
    expect(await statusFor('203.0.113.1')).toBe(429);
    // The right-most untrusted entry is the client: a forged left-most one changes nothing.
    expect(await statusFor('198.51.100.9, 203.0.113.1')).toBe(429);
    expect(await statusFor('203.0.113.2')).toBe(200);
  });

  it('counts an IPv6 /64 as one client', async () => {
    expect(await statusFor('2001:db8:1:2::1')).toBe(200);
    expect(await statusFor('2001:db8:1:2:aaaa::ffff')).toBe(200);
    expect(await statusFor('2001:0db8:0001:0002::7')).toBe(429);
    expect(await statusFor('2001:db8:1:3::1')).toBe(200);
  });
});

describeWithRedis('the cost budget', () => {
  let server: TestServer;
  let redis: TestRedis;
  const query = '{ products(first: 10) { edges { node { id name } } } }';
  // Two runs fit in the budget, the third does not.
  const budget = Math.floor(2.5 * estimateCost(parse(query)));

  beforeAll(async () => {
    redis = await startRedis();
    server = await startTestServer({
      env: { REDIS_URL: redis.url, RATE_LIMIT_COST_PER_MINUTE: String(budget) },
    });
    expect(await sharedStoreIs(true, [server])).toBe(true);
  });

  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
  });

  it('refuses an operation once the minute’s estimated cost is spent, on either API', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 3; i++) answers.push((await graphql(server, {}, query)).response.status);
    expect(answers).toEqual([200, 200, 429]);
    const refused = await graphql(server, {}, query);
    expect(refused.response.status).toBe(429);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.response.headers.get('ratelimit-limit')).toBe(String(budget));
    // /api/v1 spends the same budget (issue 28 row 8; before, it was never charged).
    const restRefused = await rest(server);
    expect(restRefused.status).toBe(429);
    expect(await restRefused.json()).toEqual({ message: 'Too Many Attempts.' });
  });
});

describeWithRedis('failing closed', () => {
  let server: TestServer;
  let redis: TestRedis;

  beforeAll(async () => {
    redis = await startRedis();
    server = await startTestServer({
      fixtures: false,
      env: { REDIS_URL: redis.url, RATE_LIMIT_REQUESTS_PER_MINUTE: '100', RATE_LIMIT_FAIL_OPEN: 'false' },
    });
    expect(await sharedStoreIs(true, [server])).toBe(true);
  });

  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
  });

  it('answers 503 with Retry-After while Redis is down, and counts again when it is back', async () => {
    expect((await rest(server)).status).toBe(200);
    await redis.kill();
    expect(await sharedStoreIs(false, [server])).toBe(true);
    const refused = await rest(server);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toEqual({ message: 'Service Unavailable.' });
    const graphqlRefused = await graphql(server);
    expect(graphqlRefused.response.status).toBe(503);
    expect(graphqlRefused.body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    await redis.restart();
    expect(await sharedStoreIs(true, [server], 10_000)).toBe(true);
    expect((await rest(server)).headers.get('ratelimit-remaining')).toBe('99');
  });
});
