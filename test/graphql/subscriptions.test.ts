import { MongoClient, type Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS } from '../../seed/fixtures';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase } from '../support/database';
import { listeningUrl, serverProcessEnv, spawnServer, waitUntil } from '../support/processes';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { subscribe, type LiveSubscription, type SubscriptionResult } from '../support/sse';

/**
 * Live orders over real HTTP (GraphQL over SSE) against the real server and database: an outside
 * writer with nothing but the plain driver changes orders, the way another application does
 * (`$set` of the fields plus `updated_at`); subscribers see it through the change feed.
 */

let server: TestServer;
let client: MongoClient;
let orders: Collection;
let alice: Record<string, string>;
let bob: Record<string, string>;
let support: Record<string, string>;
const open: LiveSubscription[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { LIVE_SUBSCRIPTIONS_PER_CUSTOMER: '3' } });
  client = await MongoClient.connect(server.testDb.uri);
  orders = client.db(server.testDb.dbName).collection('orders');
  alice = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
  bob = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.bob }));
  support = bearer(await mintToken({ sub: 'staff_1', scope: 'orders:read:all' }));
});
afterAll(async () => {
  for (const subscription of open) subscription.close();
  await client?.close();
  await server?.stop();
});

async function live(query: string, variables: Record<string, unknown>, headers: Record<string, string>) {
  const subscription = await subscribe(server.url, query, variables, headers);
  open.push(subscription);
  return subscription;
}

const ordersOf = (customer: string) => FIXTURE_ORDERS.filter((order) => order.customer_id === customer);
const [aliceOrder, aliceOther] = ordersOf(FIXTURE_CUSTOMERS.alice);
const [bobOrder] = ordersOf(FIXTURE_CUSTOMERS.bob);

const ORDER = `subscription ($ulid: ID!) { order(ulid: $ulid) { ulid fulfillmentStatus paymentStatus total { amount } } }`;
const VIEWER_ORDERS = `subscription { viewerOrders { ulid fulfillmentStatus } }`;

/** What another application writes: the changed field and `updated_at`, nothing else. */
function setStatus(ulid: string, fulfillment_status: string, extra: Record<string, unknown> = {}) {
  return orders.updateOne({ ulid }, { $set: { fulfillment_status, ...extra, updated_at: new Date() } });
}

const orderEvents = (results: SubscriptionResult[], field = 'order') =>
  results.map((result) => result.data?.[field] as { ulid: string; fulfillmentStatus: string } | undefined);
const codeOf = (result: SubscriptionResult | undefined) => result?.errors?.[0]?.extensions?.code;

describe('subscription order(ulid:)', () => {
  it('sends the order now, then its new state when another application changes it', async () => {
    const subscription = await live(ORDER, { ulid: aliceOrder!.ulid }, alice);
    expect(subscription.status).toBe(200);
    expect(subscription.contentType).toMatch(/^text\/event-stream/);
    await subscription.waitFor((results) => results.length === 1);
    expect(orderEvents(subscription.results)[0]).toMatchObject({ ulid: aliceOrder!.ulid });

    // A write that changes no status, amount or item is not an event; the next one is.
    await orders.updateOne({ ulid: aliceOrder!.ulid }, { $set: { updated_at: new Date() } });
    await setStatus(aliceOrder!.ulid, 'refunded');
    await subscription.waitFor((results) =>
      orderEvents(results).some((order) => order?.fulfillmentStatus === 'REFUNDED'),
    );
    expect(subscription.results).toHaveLength(2);
    expect(subscription.completed()).toBe(false);
    subscription.close();
    expect(await waitUntil(() => server.liveOrders.count() === 0, 5_000)).toBe(true);
  });

  it('answers UNAUTHENTICATED, FORBIDDEN and NOT_FOUND as the query does', async () => {
    const anonymous = await live(ORDER, { ulid: aliceOrder!.ulid }, {});
    const other = await live(ORDER, { ulid: aliceOrder!.ulid }, bob);
    const missing = await live(ORDER, { ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }, alice);
    const garbage = await live(ORDER, { ulid: 'not-a-ulid' }, alice);
    for (const subscription of [anonymous, other, missing, garbage]) await subscription.ended;
    expect([anonymous, other, missing, garbage].map((s) => codeOf(s.results[0]))).toEqual([
      'UNAUTHENTICATED',
      'FORBIDDEN',
      'NOT_FOUND',
      'NOT_FOUND',
    ]);
    expect(other.results[0]?.data ?? null).toBeNull();
    expect(server.liveOrders.count()).toBe(0);
  });
});

describe('subscription viewerOrders', () => {
  it("brings a customer's own changes and never another customer's", async () => {
    const aliceLive = await live(VIEWER_ORDERS, {}, alice);
    const bobLive = await live(VIEWER_ORDERS, {}, bob);
    await waitUntil(() => server.liveOrders.count() === 2, 5_000);
    await setStatus(aliceOther!.ulid, 'processing');
    await aliceLive.waitFor((results) =>
      orderEvents(results, 'viewerOrders').some((order) => order?.ulid === aliceOther!.ulid),
    );
    // Bob's own change arrives after Alice's was handled: by then hers would have reached him.
    await setStatus(bobOrder!.ulid, 'partially_fulfilled');
    await bobLive.waitFor((results) => results.length > 0);
    expect(orderEvents(bobLive.results, 'viewerOrders').map((order) => order?.ulid)).toEqual([
      bobOrder!.ulid,
    ]);
    expect(orderEvents(aliceLive.results, 'viewerOrders').map((order) => order?.ulid)).toEqual([
      aliceOther!.ulid,
    ]);
    aliceLive.close();
    bobLive.close();
  });
});

describe('filters', () => {
  it('refuses what the lists refuse: customerId on viewerOrders, a bad currency on orders', async () => {
    const mine = await live(
      `subscription { viewerOrders(filter: { customerId: "cus_bob" }) { ulid } }`,
      {},
      alice,
    );
    const desk = await live(`subscription { orders(filter: { currency: "euro" }) { ulid } }`, {}, support);
    for (const subscription of [mine, desk]) await subscription.ended;
    expect([mine, desk].map((subscription) => codeOf(subscription.results[0]))).toEqual([
      'BAD_USER_INPUT',
      'BAD_USER_INPUT',
    ]);
    expect(desk.results[0]?.errors?.[0]?.extensions?.errors).toEqual({
      'filter.currency': ['The currency filter must be a three-letter currency code.'],
    });
    expect(server.liveOrders.count()).toBe(0);
  });
});

describe('subscription orders(filter:)', () => {
  it('needs orders:read:all, and sends the changes that match the filter', async () => {
    const customer = await live(`subscription { orders { ulid } }`, {}, alice);
    await customer.ended;
    expect(codeOf(customer.results[0])).toBe('FORBIDDEN');

    const desk = await live(
      `subscription { orders(filter: { fulfillmentStatus: [PARTIALLY_FULFILLED] }) { ulid fulfillmentStatus } }`,
      {},
      support,
    );
    await waitUntil(() => server.liveOrders.count() === 1, 5_000);
    await setStatus(bobOrder!.ulid, 'completed');
    await setStatus(aliceOther!.ulid, 'partially_fulfilled');
    await desk.waitFor((results) => results.length > 0);
    expect(orderEvents(desk.results, 'orders')).toEqual([
      { ulid: aliceOther!.ulid, fulfillmentStatus: 'PARTIALLY_FULFILLED' },
    ]);
    desk.close();
  });
});

describe('a stream ends', () => {
  it('when its token expires: a last UNAUTHENTICATED event, then complete', async () => {
    const expiring = bearer(
      await mintToken({ sub: FIXTURE_CUSTOMERS.bob, expiresAt: Math.floor(Date.now() / 1000) + 2 }),
    );
    const subscription = await live(VIEWER_ORDERS, {}, expiring);
    await subscription.ended;
    expect(subscription.completed()).toBe(true);
    expect(codeOf(subscription.results.at(-1))).toBe('UNAUTHENTICATED');
  });

  it('when the client goes away: nothing is left of its subscription', async () => {
    await waitUntil(() => server.liveOrders.count() === 0, 5_000);
    const subscriptions = await Promise.all(
      [alice, bob, support].map((headers) => live(VIEWER_ORDERS, {}, headers)),
    );
    await waitUntil(() => server.liveOrders.count() === 3, 5_000);
    expect(server.liveOrders.count()).toBe(3);
    const gauge = async () =>
      /^live_subscriptions (\d+)$/m.exec(await (await server.request('/metrics')).text())?.[1];
    expect(await gauge()).toBe('3');
    for (const subscription of subscriptions) subscription.close();
    expect(await waitUntil(() => server.liveOrders.count() === 0, 5_000)).toBe(true);
    expect(await gauge()).toBe('0');
  });
});

describe('bounds', () => {
  it('refuses a customer more subscriptions than LIVE_SUBSCRIPTIONS_PER_CUSTOMER, and takes one again once one ends', async () => {
    const three = await Promise.all([1, 2, 3].map(() => live(VIEWER_ORDERS, {}, bob)));
    await waitUntil(() => server.liveOrders.count() === 3, 5_000);
    const fourth = await live(VIEWER_ORDERS, {}, bob);
    await fourth.ended;
    expect(codeOf(fourth.results[0])).toBe('TOO_MANY_SUBSCRIPTIONS');
    expect(fourth.results[0]?.errors?.[0]?.message).toMatch(/At most 3 live subscriptions per customer/);
    // Another customer is not counted against Bob.
    const other = await live(VIEWER_ORDERS, {}, alice);
    await waitUntil(() => server.liveOrders.count() === 4, 5_000);
    expect(other.completed()).toBe(false);

    three[0]!.close();
    await waitUntil(() => server.liveOrders.count() === 3, 5_000);
    const again = await live(VIEWER_ORDERS, {}, bob);
    await waitUntil(() => server.liveOrders.count() === 4, 5_000);
    expect(again.completed()).toBe(false);
    for (const subscription of [...three, other, again]) subscription.close();
  });
});

describe('SIGTERM', () => {
  it('ends every stream with a last SERVICE_UNAVAILABLE event that says when to subscribe again, then exits', async () => {
    const testDb = await openTestDatabase('live-drain');
    await loadFixtures(testDb.db);
    const child = spawnServer(serverProcessEnv(testDb, { SHUTDOWN_DEADLINE_MS: '5000' }));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await listeningUrl(child);
      const streams = await Promise.all(
        [
          [aliceOrder!.ulid, alice],
          [bobOrder!.ulid, bob],
          [aliceOther!.ulid, support],
        ].map(([ulid, headers]) => subscribe(url, ORDER, { ulid }, headers as Record<string, string>)),
      );
      // Each has its first event: all three are open on the server.
      for (const stream of streams) await stream.waitFor((results) => results.length === 1);
      child.kill('SIGTERM');
      await Promise.all(streams.map((stream) => stream.ended));
      expect(await exited).toBe(0);
      for (const stream of streams) {
        expect(stream.completed()).toBe(true);
        expect(stream.results).toHaveLength(2);
        expect(stream.results[1]?.errors?.[0]?.extensions).toEqual({
          code: 'SERVICE_UNAVAILABLE',
          retryAfter: 5,
        });
      }
    } finally {
      child.kill('SIGKILL');
      await testDb.close();
    }
  }, 30_000);
});

describe('with the response cache and the rate limits on', () => {
  let cached: TestServer;
  beforeAll(async () => {
    cached = await startTestServer({
      env: { RESPONSE_CACHE_TTL_MS: '60000', RATE_LIMIT_REQUESTS_PER_MINUTE: '4' },
    });
  });
  afterAll(() => cached?.stop());

  it('streams past the cache, and a subscription counts as one request', async () => {
    const first = await subscribe(cached.url, ORDER, { ulid: aliceOrder!.ulid }, alice);
    const second = await subscribe(cached.url, ORDER, { ulid: aliceOrder!.ulid }, alice);
    for (const stream of [first, second]) await stream.waitFor((results) => results.length === 1);
    await cached.testDb.db
      .collection('orders')
      .updateOne({ ulid: aliceOrder!.ulid }, { $set: { payment_status: 'pending', updated_at: new Date() } });
    for (const stream of [first, second])
      await stream.waitFor((results) =>
        results.some(
          (result) => (result.data?.order as { paymentStatus?: string })?.paymentStatus === 'PENDING',
        ),
      );
    expect((await cached.graphql('{ __typename }', {}, alice)).status).toBe(200);
    expect((await cached.graphql('{ __typename }', {}, alice)).status).toBe(200);
    // The fifth request of the minute, a subscription, is refused like any other.
    const refused = await subscribe(cached.url, ORDER, { ulid: aliceOrder!.ulid }, alice);
    expect(refused.status).toBe(429);
    for (const stream of [first, second, refused]) stream.close();
  });
});
