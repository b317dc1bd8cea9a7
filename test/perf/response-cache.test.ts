import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_COMMENT } from '../../src/db/feed-types';
import { FOREIGN_KEY_PROBE } from '../../src/db/foreign-keys';
import { PRODUCT_FIELDS } from '../graphql/helpers';
import { POLLING_FEED, bearer, mintToken, startTestServer, type TestServer } from '../support/server';

let server: TestServer;
let finds = 0;

beforeAll(async () => {
  // Polling: a write without updated_at is not seen, so only the TTL ends a cached answer (with the
  // log the write purges it at once: test/ops/log-feed.test.ts).
  server = await startTestServer({
    env: { ...POLLING_FEED, RESPONSE_CACHE_TTL_MS: '400', LOG_LEVEL: 'error' },
  });
  server.database.client.on('commandStarted', (event) => {
    const reads = ['find', 'aggregate', 'count'];
    // Not the change feed's reads: once a second whatever the traffic.
    if (
      reads.includes(event.commandName) &&
      event.databaseName === server.testDb.dbName &&
      event.command.comment !== FEED_COMMENT
    )
      finds++;
  });
});
afterAll(() => server.stop());

async function findsDuring(work: () => Promise<unknown>): Promise<number> {
  const before = finds;
  await work();
  return finds - before;
}

describe('response cache and conditional requests', () => {
  it('answers a repeated anonymous product read from the cache until the TTL passes', async () => {
    const path = '/api/v1/products?per_page=3&category=software';
    const first = await server.request(path);
    const body = await first.text();
    expect(await findsDuring(() => server.request(path).then((response) => response.text()))).toBe(0);
    // With a token the product read is still public and shared.
    const token = await mintToken({ sub: 'cus_alice' });
    const withToken = await server.request(path, { headers: bearer(token) });
    expect(await withToken.text()).toBe(body);

    await server.testDb.db.collection('products').updateOne({ id: 11 }, { $set: { name: 'Renamed' } });
    expect(await (await server.request(path)).text()).toBe(body);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await (await server.request(path)).text()).toContain('Renamed');
    await server.testDb.db
      .collection('products')
      .updateOne({ id: 11 }, { $set: { name: 'DevForge C++ Studio License' } });
  });

  it('sends an ETag and answers 304 to If-None-Match', async () => {
    const path = '/api/v1/products/search?term=soundwave';
    // The identity bytes' strong ETag (fetch would ask for gzip; compressed, the ETag is weak:
    // test/http/compression.test.ts).
    const identity = { 'accept-encoding': 'identity' };
    const first = await server.request(path, { headers: identity });
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    const again = await server.request(path, { headers: { ...identity, 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const weak = await server.request(path, {
      headers: { ...identity, 'if-none-match': `"other", W/${etag}` },
    });
    expect(weak.status).toBe(304);
    const stale = await server.request(path, {
      headers: { ...identity, 'if-none-match': '"something-else"' },
    });
    expect(stale.status).toBe(200);
  });

  it('never caches orders', async () => {
    const path = '/api/v1/orders/01KE78KGFSQ4ZC7N2XW8RTB3MD';
    const alice = bearer(await mintToken({ sub: 'cus_alice' }));
    expect((await server.request(path, { headers: alice })).status).toBe(200);
    expect(await findsDuring(() => server.request(path, { headers: alice }))).toBe(1);
    const bob = bearer(await mintToken({ sub: 'cus_bob' }));
    expect((await server.request(path, { headers: bob })).status).toBe(403);
    expect((await server.request(path)).status).toBe(401);
  });

  it('caches GraphQL product queries too', async () => {
    const query = '{ productPage(perPage: 2, search: "gift") { total items { name } } }';
    const first = await server.graphql(query);
    expect(first.body.errors).toBeUndefined();
    expect(await findsDuring(() => server.graphql(query))).toBe(0);
    const metrics = await (await server.request('/metrics')).text();
    expect(Number(/response_cache_lookups_total\{result="hit"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(
      0,
    );
    expect(Number(/response_cache_lookups_total\{result="miss"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(
      0,
    );
  });

  it('caches categories and brands like the other public product reads', async () => {
    const query = '{ categories { name productCount } brands { id name productCount } }';
    expect((await server.graphql(query)).body.errors).toBeUndefined();
    expect(await findsDuring(() => server.graphql(query))).toBe(0);
  });

  it('never caches an order list, not even an empty one', async () => {
    const query = '{ viewer { customerId orders(first: 5) { totalCount edges { node { ulid } } } } }';
    const nobody = bearer(await mintToken({ sub: 'cus_without_orders' }));
    const carol = bearer(await mintToken({ sub: 'cus_carol' }));
    const empty = await server.graphql(query, {}, nobody);
    expect(empty.body.data).toEqual({
      viewer: { customerId: 'cus_without_orders', orders: { totalCount: 0, edges: [] } },
    });
    // The bounded walk of the newest orders finds none of theirs, so the customer index is read
    // too (src/db/orders/order-repository.ts), then the count: three reads, none from a cache.
    expect(await findsDuring(() => server.graphql(query, {}, nobody))).toBe(3);
    // Same document, another token: never the first caller's answer.
    const other = await server.graphql(query, {}, carol);
    expect((other.body.data as { viewer: { customerId: string } }).viewer.customerId).toBe('cus_carol');
    const alice = bearer(await mintToken({ sub: 'cus_alice' }));
    expect(await findsDuring(() => server.graphql(query, {}, alice))).toBe(2);
    const support = bearer(await mintToken({ sub: 'staff', scope: 'orders:read:all' }));
    const all = '{ orders(first: 1, filter: { currency: "JPY" }) { edges { node { ulid } } } }';
    expect((await server.graphql(all, {}, support)).body.errors).toBeUndefined();
    expect(await findsDuring(() => server.graphql(all, {}, support))).toBe(1);
  });
});

describe('response cache byte bounds', () => {
  let bounded: TestServer;
  let boundedFinds = 0;
  beforeAll(async () => {
    bounded = await startTestServer({
      env: { RESPONSE_CACHE_TTL_MS: '60000', RESPONSE_CACHE_MAX_ENTRY_BYTES: '4096', LOG_LEVEL: 'error' },
    });
    bounded.database.client.on('commandStarted', (event) => {
      // Page reads: a find, or a numbered page's aggregation (it sorts; a count does not).
      const page =
        event.commandName === 'find' ||
        (event.commandName === 'aggregate' &&
          (event.command.pipeline as Document[]).some((stage) => '$sort' in stage));
      // Not the feed's reads, nor the probe for other writers' keys (once a second, whenever it falls).
      const background = [FEED_COMMENT, FOREIGN_KEY_PROBE].includes(event.command.comment as string);
      if (page && event.databaseName === bounded.testDb.dbName && !background) boundedFinds++;
    });
  });
  afterAll(() => bounded.stop());

  const findsFor = async (work: () => Promise<unknown>) => {
    const before = boundedFinds;
    await work();
    return boundedFinds - before;
  };

  it('keeps results within RESPONSE_CACHE_MAX_ENTRY_BYTES and serves larger ones fresh every time', async () => {
    const small = '/api/v1/products?per_page=1';
    const large = '/api/v1/products?per_page=20';
    expect((await (await bounded.request(large)).text()).length).toBeGreaterThan(4096);
    await (await bounded.request(small)).text();
    expect(await findsFor(() => bounded.request(small).then((response) => response.text()))).toBe(0);
    expect(await findsFor(() => bounded.request(large).then((response) => response.text()))).toBe(1);

    const graphqlLarge = `{ productPage(perPage: 20) { items { ...AllProductFields } } } ${PRODUCT_FIELDS}`;
    expect(JSON.stringify((await bounded.graphql(graphqlLarge)).body).length).toBeGreaterThan(4096);
    expect(await findsFor(() => bounded.graphql(graphqlLarge))).toBe(1);
    const graphqlSmall = '{ productPage(perPage: 1) { items { name } } }';
    await bounded.graphql(graphqlSmall);
    expect(await findsFor(() => bounded.graphql(graphqlSmall))).toBe(0);
  });
});
