import { SignJWT } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadGenerated } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { waitUntil } from '../support/processes';
import { bearer, mintToken, startTestServer, TEST_JWT_SECRET, type TestServer } from '../support/server';
import { subscribe, type LiveSubscription, type SubscriptionResult } from '../support/sse';

/**
 * What a live stream may take and how long it may last (issue 36, rows 4, 5 and 7), over real
 * HTTP against the real server: streams have a cap of their own below the connection cap and per
 * client address; a reader that keeps up gets every event of a burst; a stream ends at its
 * maximum lifetime when its token has no `exp`.
 */

const VIEWER_ORDERS = 'subscription { viewerOrders { ulid } }';
const codeOf = (result: SubscriptionResult | undefined) => result?.errors?.[0]?.extensions?.code;

let server: TestServer | undefined;
const open: LiveSubscription[] = [];
afterEach(async () => {
  for (const subscription of open.splice(0)) subscription.close();
  await server?.stop();
  server = undefined;
});

async function live(headers: Record<string, string>, query = VIEWER_ORDERS) {
  const subscription = await subscribe(server!.url, query, {}, headers);
  open.push(subscription);
  return subscription;
}

const customer = async (n: number) => bearer(await mintToken({ sub: `cus_bounds_${n}` }));

describe('streams cannot take a whole instance (row 4)', () => {
  it('keep a share of MAX_CONNECTIONS (80 %) for ordinary requests', async () => {
    server = await startTestServer({ fixtures: false, env: { MAX_CONNECTIONS: '12' } });
    expect(server.liveOrders.count()).toBe(0);
    const streams = [];
    for (let n = 0; n < 12; n += 1) streams.push(await live(await customer(n)));
    await waitUntil(() => server!.liveOrders.count() === 9, 3_000);
    expect(server.liveOrders.count()).toBe(9);
    const refused = streams.filter((stream) => codeOf(stream.results[0]) === 'TOO_MANY_SUBSCRIPTIONS');
    expect(refused).toHaveLength(3);
    expect(refused[0]?.results[0]?.errors?.[0]?.message).toMatch(/its limit of 9 live subscriptions/);
    // Before: 12 streams held all 12 connections and this page was refused.
    const page = await server.request('/api/v1/products?per_page=1');
    expect(page.status).toBe(200);
  });

  it('are bounded per client address (LIVE_SUBSCRIPTIONS_PER_ADDRESS), as the rate limits see it', async () => {
    server = await startTestServer({
      fixtures: false,
      env: { TRUSTED_PROXIES: 'loopback', LIVE_SUBSCRIPTIONS_PER_ADDRESS: '2' },
    });
    const from = (address: string, headers: Record<string, string>) => ({
      ...headers,
      'x-forwarded-for': address,
    });
    await live(from('203.0.113.7', await customer(1)));
    await live(from('203.0.113.7', await customer(2)));
    await waitUntil(() => server!.liveOrders.count() === 2, 3_000);
    const third = await live(from('203.0.113.7', await customer(3)));
    await third.waitFor((results) => results.length > 0, 3_000);
    expect(codeOf(third.results[0])).toBe('TOO_MANY_SUBSCRIPTIONS');
    expect(third.results[0]?.errors?.[0]?.message).toMatch(/At most 2 live subscriptions per client address/);
    const elsewhere = await live(from('203.0.113.8', await customer(3)));
    await waitUntil(() => server!.liveOrders.count() === 3, 3_000);
    expect(elsewhere.completed()).toBe(false);
  });
});

describe('a reader that keeps up (row 5)', () => {
  let testDb: TestDatabase | undefined;
  afterAll(() => testDb?.close());

  it('gets every event of a 150-order burst from one outside updateMany', async () => {
    testDb = await openTestDatabase('burst');
    await loadGenerated(testDb.db, { seed: 7, products: 20, orders: 400 });
    server = await startTestServer({ database: testDb });
    const orders = testDb.db.collection('orders');
    const burst = (
      await orders
        .find({ fulfillment_status: { $ne: 'refunded' } }, { projection: { ulid: 1 } })
        .limit(150)
        .toArray()
    ).map((order) => order.ulid as string);
    expect(burst).toHaveLength(150);
    const desk = await live(
      bearer(await mintToken({ sub: 'desk', scope: 'orders:read:all' })),
      'subscription { orders { ulid } }',
    );
    await waitUntil(() => server!.liveOrders.count() === 1, 3_000);
    await orders.updateMany(
      { ulid: { $in: burst } },
      { $set: { fulfillment_status: 'refunded', updated_at: new Date() } },
    );
    // Before: one event, then SUBSCRIBER_TOO_SLOW (the bound of 100 was met inside the batch).
    await desk.waitFor((results) => results.length >= 150 || results.some((result) => result.errors), 15_000);
    expect(desk.results.filter((result) => result.errors)).toEqual([]);
    expect(new Set(desk.results.map((result) => (result.data?.orders as { ulid: string }).ulid))).toEqual(
      new Set(burst),
    );
    expect(desk.completed()).toBe(false);
  });
});

describe('a stream ends (row 7)', () => {
  it('at LIVE_STREAM_MAX_LIFETIME_S when its token has no exp: a last event with retryAfter, then complete', async () => {
    server = await startTestServer({ fixtures: false, env: { LIVE_STREAM_MAX_LIFETIME_S: '2' } });
    const forever = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('cus_no_exp')
      .setIssuedAt()
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const started = Date.now();
    const stream = await live(bearer(forever));
    await waitUntil(() => server!.liveOrders.count() === 1, 3_000);
    // Before: the stream never ended.
    await Promise.race([stream.ended, new Promise((resolve) => setTimeout(resolve, 6_000))]);
    expect(stream.completed()).toBe(true);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_700);
    expect(elapsed).toBeLessThan(4_000);
    expect(stream.results.at(-1)?.errors?.[0]?.extensions).toEqual({
      code: 'STREAM_LIFETIME_REACHED',
      retryAfter: 1,
    });
    expect(await waitUntil(() => server!.liveOrders.count() === 0, 2_000)).toBe(true);
  });
});
