import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithRedis } from '../support/describe-with-redis';
import { sharedStoreIs, waitUntil } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { subscribe, type LiveSubscription, type SubscriptionResult } from '../support/sse';

/**
 * LIVE_SUBSCRIPTIONS_PER_CUSTOMER holds across the fleet when REDIS_URL is set, as the rate
 * limits do (issue 36, row 8: one token had 10 open on each of two instances, 20 in all).
 */

const VIEWER_ORDERS = 'subscription { viewerOrders { ulid } }';
const codeOf = (result: SubscriptionResult | undefined) => result?.errors?.[0]?.extensions?.code;

describeWithRedis('live subscriptions per customer, across two instances', () => {
  let redis: TestRedis;
  let a: TestServer;
  let b: TestServer;
  let carol: Record<string, string>;
  const open: LiveSubscription[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, LIVE_SUBSCRIPTIONS_PER_CUSTOMER: '2' };
    [a, b] = await Promise.all([
      startTestServer({ fixtures: false, env }),
      startTestServer({ fixtures: false, env }),
    ]);
    expect(await sharedStoreIs(true, [a, b])).toBe(true);
    carol = bearer(await mintToken({ sub: 'cus_fleet_carol' }));
  });

  afterAll(async () => {
    for (const subscription of open) subscription.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  const live = async (server: TestServer, headers = carol) => {
    const subscription = await subscribe(server.url, VIEWER_ORDERS, {}, headers);
    open.push(subscription);
    return subscription;
  };

  it('counts one on A and one on B, refuses a third on either, and takes one again once one ends', async () => {
    await live(a);
    const onB = await live(b);
    expect(await waitUntil(() => a.liveOrders.count() === 1 && b.liveOrders.count() === 1, 3_000)).toBe(true);
    const third = await live(a);
    await third.waitFor((results) => results.length > 0, 3_000);
    expect(codeOf(third.results[0])).toBe('TOO_MANY_SUBSCRIPTIONS');
    expect(third.results[0]?.errors?.[0]?.message).toMatch(/on all servers together/);
    expect(a.liveOrders.count()).toBe(1);

    // Another customer is not counted against Carol.
    await live(b, bearer(await mintToken({ sub: 'cus_fleet_dave' })));
    expect(await waitUntil(() => b.liveOrders.count() === 2, 3_000)).toBe(true);

    onB.close();
    expect(await waitUntil(() => b.liveOrders.count() === 1, 3_000)).toBe(true);
    // The slot is given back in Redis as the stream ends (a moment after the count drops).
    let again: LiveSubscription | undefined;
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      again = await live(a);
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (again.results.length === 0) break;
    }
    expect(again?.results).toEqual([]);
    expect(await waitUntil(() => a.liveOrders.count() === 2, 3_000)).toBe(true);
  });

  it('counts per instance while Redis is down: subscriptions are not refused for it', async () => {
    for (const subscription of open.splice(0)) subscription.close();
    expect(await waitUntil(() => a.liveOrders.count() === 0 && b.liveOrders.count() === 0, 3_000)).toBe(true);
    await redis.kill();
    expect(await sharedStoreIs(false, [a, b])).toBe(true);
    const erin = bearer(await mintToken({ sub: 'cus_fleet_erin' }));
    await Promise.all([live(a, erin), live(a, erin), live(b, erin)]);
    expect(await waitUntil(() => a.liveOrders.count() === 2 && b.liveOrders.count() === 1, 3_000)).toBe(true);
  });
});
