import { MongoClient } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS } from '../../seed/fixtures';
import { startServerOnOwnDatabase, type OwnDatabaseServer } from '../support/own-database';
import { bearer, mintToken } from '../support/server';
import { subscribe, type SubscriptionResult } from '../support/sse';

/**
 * Issue 27: a database restart loses no event. An outside writer changes an order, and the
 * database goes down before the change feed has read it (the feed polls every 5 s here); when the
 * database is back, the feed reads on from its saved position and the open subscription gets the
 * change. The subscription itself stays open across the outage.
 */

let own: OwnDatabaseServer | undefined;

afterAll(() => own?.stop());

const statusesIn = (results: SubscriptionResult[]) =>
  results.map(
    (result) => (result.data?.order as { fulfillmentStatus?: string } | undefined)?.fulfillmentStatus,
  );

describe('live orders across a database restart', () => {
  it('delivers a change written just before the database went down, once it is back', async () => {
    own = await startServerOnOwnDatabase('live_outage', {
      MONGODB_TIMEOUT_MS: '1000',
      CHANGE_FEED_INTERVAL_MS: '5000',
      RESPONSE_CACHE_TTL_MS: '0',
    });
    const { server, database } = own;
    const order = FIXTURE_ORDERS.find((candidate) => candidate.customer_id === FIXTURE_CUSTOMERS.alice)!;
    const subscription = await subscribe(
      server.url,
      'subscription ($ulid: ID!) { order(ulid: $ulid) { ulid fulfillmentStatus } }',
      { ulid: order.ulid },
      bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice })),
    );
    expect(subscription.status).toBe(200);
    await subscription.waitFor((results) => results.length >= 1, 10_000);
    const changedTo = order.fulfillment_status === 'refunded' ? 'completed' : 'refunded';

    // The outside writer: the plain driver, as another application writes.
    const writer = new MongoClient(database.uri);
    await writer
      .db('live_outage')
      .collection('orders')
      .updateOne({ ulid: order.ulid }, { $set: { fulfillment_status: changedTo, updated_at: new Date() } });
    await writer.close();
    const arrived = changedTo.toUpperCase();
    await database.stop();
    // Usually the feed has not read the write yet (it polls every 5 s); when it has, the change
    // simply arrived before the outage: either way it must arrive once.
    const beforeOutage = statusesIn(subscription.results).includes(arrived);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await own.restart();

    const restarted = performance.now();
    await subscription.waitFor((results) => statusesIn(results).includes(arrived), 30_000);
    console.log(
      beforeOutage
        ? 'live orders: the feed read the change before the outage'
        : `live orders: the change came through the restart, ${Math.round(performance.now() - restarted)} ms after the database's start returned`,
    );
    expect(subscription.completed()).toBe(false);
    expect(statusesIn(subscription.results).filter((status) => status === arrived)).toHaveLength(1);
    subscription.close();
  }, 120_000);
});
