import { createClient, type ExecutionResult } from 'graphql-sse';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS } from '../../seed/fixtures';
import { waitUntil } from '../support/processes';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * Issue 27: the `graphql-sse` client (the GraphQL over SSE protocol's own, in its default
 * distinct-connections mode) subscribes to live orders at /graphql as a storefront app would.
 */

let server: TestServer;
let writer: MongoClient;

beforeAll(async () => {
  server = await startTestServer();
  writer = await MongoClient.connect(server.testDb.uri);
});
afterAll(async () => {
  await writer?.close();
  await server?.stop();
});

type OrderEvent = ExecutionResult<{ order: { ulid: string; fulfillmentStatus: string } }>;

describe('the graphql-sse client', () => {
  it('gets the order now, then the change an outside writer makes', async () => {
    const order = FIXTURE_ORDERS.find((candidate) => candidate.customer_id === FIXTURE_CUSTOMERS.alice)!;
    const client = createClient({
      url: `${server.url}/graphql`,
      headers: bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice })),
      retryAttempts: 0,
    });
    const events: OrderEvent[] = [];
    const errors: unknown[] = [];
    const dispose = client.subscribe<OrderEvent['data']>(
      {
        query: 'subscription ($ulid: ID!) { order(ulid: $ulid) { ulid fulfillmentStatus } }',
        variables: { ulid: order.ulid },
      },
      {
        next: (event) => void events.push(event as OrderEvent),
        error: (error) => errors.push(error),
        complete: () => undefined,
      },
    );
    try {
      expect(await waitUntil(() => events.length >= 1 || errors.length > 0, 10_000)).toBe(true);
      expect(errors).toEqual([]);
      expect(events[0]?.data?.order.ulid).toBe(order.ulid);

      const changedTo = order.fulfillment_status === 'refunded' ? 'completed' : 'refunded';
      await writer
        .db(server.testDb.dbName)
        .collection('orders')
        .updateOne({ ulid: order.ulid }, { $set: { fulfillment_status: changedTo, updated_at: new Date() } });
      const arrived = () =>
        events.some((event) => event.data?.order.fulfillmentStatus === changedTo.toUpperCase());
      expect(await waitUntil(arrived, 10_000)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      dispose();
      client.dispose();
    }
  });
});
