import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_ORDERS } from '../../seed/fixtures';
import { isBackgroundCommand } from '../support/background-commands';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * MONGODB_TIMEOUT_MS bounds an operation on the server too: the request already answered 503 at
 * the deadline (src/db/guards/deadline.ts), and maxTimeMS stops the abandoned query instead of letting it
 * run on, holding a pooled connection, until the socket timeout.
 */

const TIMEOUT_MS = 2_500;
const READS = new Set(['find', 'count', 'aggregate']);

let server: TestServer;
const reads: CommandStartedEvent[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { MONGODB_TIMEOUT_MS: String(TIMEOUT_MS) } });
  server.database.client.on('commandStarted', (event) => {
    // Not the background's (the feed's resync, whenever it runs, reads the catalogue in one cursor).
    if (
      event.databaseName === server.testDb.dbName &&
      READS.has(event.commandName) &&
      !isBackgroundCommand(event.command)
    )
      reads.push(event);
  });
});
afterAll(() => server.stop());

describe('every read the API sends', () => {
  it('carries maxTimeMS = MONGODB_TIMEOUT_MS, and the database accepts it', async () => {
    const admin = bearer(await mintToken({ sub: 'support_agent', scope: 'orders:read:all' }));
    const ulid = FIXTURE_ORDERS[0]!.ulid;
    const answers = await Promise.all([
      server.request('/api/v1/products'),
      server.request('/api/v1/products?search=card&category=Gift%20Cards'),
      server.request('/api/v1/products/search?term=card'),
      server.request(`/api/v1/orders/${ulid}`, { headers: admin }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const graphql = await server.graphql(
      `{ categories { name productCount } brands { name productCount }
         products(first: 5, search: "card") { totalCount edges { node { id } } }
         orders(first: 5) { totalCount edges { node { id items { id } } } } }`,
      {},
      admin,
    );
    expect(graphql.status).toBe(200);
    expect(graphql.body.errors).toBeUndefined();

    const names = new Set(reads.map((event) => event.commandName));
    // Counts are countDocuments (an aggregation): exact, never the estimated `count`.
    expect(names).toEqual(new Set(['find', 'aggregate']));
    const unbounded = reads.filter((event) => event.command.maxTimeMS !== TIMEOUT_MS);
    expect(unbounded.map((event) => event.commandName)).toEqual([]);
  });
});
