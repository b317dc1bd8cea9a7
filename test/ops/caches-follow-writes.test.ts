import { MongoClient, type CommandStartedEvent, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchTextHash } from '../../src/db/catalog/search-grams';
import { searchableTextOf } from '../../src/db/catalog/search-grams';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { isBackgroundCommand } from '../support/background-commands';
import { startRedis, type TestRedis } from '../support/redis';
import { startTestServer, type TestServer } from '../support/server';

/**
 * What the server derives from the catalogue follows another application's writes through the
 * change feed: cached pages, searches and `categories` are purged on every instance (sharing
 * Redis or not), and a filter's total is counted once and reused until a change could move it.
 * Caches live ten minutes here, so only the feed can make a change show.
 */

const GRACE_MS = 5_000;
const LONG_CACHE = { RESPONSE_CACHE_TTL_MS: '600000', CHANGE_FEED_RECONCILE_MS: '1000' };
const GIFT_PAGE = '/api/v1/products?category=Gift%20Cards&per_page=2';
const CATEGORIES = '{ categories { name productCount } }';

type Products = import('mongodb').Collection<{ _id: unknown; [field: string]: unknown }>;

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + GRACE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${GRACE_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function page(server: TestServer, path = GIFT_PAGE) {
  const response = await server.request(path);
  const body = (await response.json()) as {
    data: { id: number; price: unknown }[];
    meta: { total: number };
  };
  return {
    cache: response.headers.get('x-cache'),
    ids: body.data.map((p) => p.id),
    total: body.meta.total,
    body,
  };
}

async function giftCardsNow(products: Products): Promise<{ ids: number[]; total: number }> {
  const rows = await products.find({ category_key: 'gift cards' }).sort({ _id: 1 }).toArray();
  return { ids: rows.slice(0, 2).map((row) => row.id as number), total: rows.length };
}

async function categoryCount(server: TestServer, name: string): Promise<number | undefined> {
  const reply = await server.graphql(CATEGORIES);
  const categories = reply.body.data?.categories as { name: string; productCount: number }[];
  return categories.find((category) => category.name === name)?.productCount;
}

describe.each([
  { name: 'one instance, caches in the process', redis: false },
  { name: 'two instances sharing Redis', redis: true },
])('cached answers after outside writes: $name', ({ redis: withRedis }) => {
  let redis: TestRedis | undefined;
  let servers: TestServer[];
  let writer: MongoClient;
  let products: Products;

  beforeAll(async () => {
    redis = withRedis ? await startRedis() : undefined;
    const env = { ...LONG_CACHE, ...(redis ? { REDIS_URL: redis.url } : {}) };
    const first = await startTestServer({ env });
    servers = [first, ...(redis ? [await startTestServer({ env, database: first.testDb })] : [])];
    writer = await MongoClient.connect(first.testDb.uri);
    products = writer.db(first.testDb.dbName).collection('products');
  });
  afterAll(async () => {
    await writer?.close();
    for (const server of [...(servers ?? [])].reverse()) await server.stop();
    await redis?.stop();
  });

  it('purges pages, totals and categories on every instance when a product is deleted, repriced or added', async () => {
    for (const server of servers) {
      await page(server);
      expect((await page(server)).cache).toBe('HIT');
      await categoryCount(server, 'Gift Cards');
    }
    const [first, second] = await products.find({ category_key: 'gift cards' }).sort({ _id: 1 }).toArray();

    await products.deleteOne({ _id: first!._id });
    for (const server of servers) {
      await until('the deletion shows', async () => {
        const now = await giftCardsNow(products);
        const shown = await page(server);
        return shown.total === now.total && JSON.stringify(shown.ids) === JSON.stringify(now.ids);
      });
      await until(
        'categories count it',
        async () => (await categoryCount(server, 'Gift Cards')) === (await giftCardsNow(products)).total,
      );
    }

    await products.updateOne(
      { _id: second!._id },
      { $set: { 'variant.price.amount': 4242, updated_at: new Date() } },
    );
    for (const server of servers)
      await until('the new price shows', async () =>
        JSON.stringify((await page(server)).body).includes('42.42'),
      );

    const { _id, ...copy } = second!;
    await products.insertOne({
      ...copy,
      _id: 777,
      id: 777,
      name: 'Cobaltine Gift Card',
      variant: { ...(copy.variant as object), id: 777_777 },
      updated_at: new Date(),
      created_at: new Date(),
    });
    for (const server of servers) {
      await until(
        'the new product is counted',
        async () => (await page(server)).total === (await giftCardsNow(products)).total,
      );
      await until(
        'and found',
        async () => (await page(server, '/api/v1/products?search=cobaltine')).total === 1,
      );
    }
  });

  it('follow a Laravel app that writes `updated_at` as text: grams, cached pages and searches, totals', async () => {
    const search = (term: string) => `/api/v1/products?search=${term}&per_page=2`;
    for (const server of servers) {
      await page(server);
      expect((await page(server, search('quillfeather'))).total).toBe(0);
      expect((await page(server)).cache).toBe('HIT');
    }
    const gift = await products.findOne({ category_key: 'gift cards' }, { sort: { _id: -1 } });
    // Laravel's default: `Y-m-d H:i:s` in UTC, whole seconds.
    const laravelNow = new Date().toISOString().slice(0, 19).replace('T', ' ');
    await products.updateOne(
      { _id: gift!._id },
      {
        $set: {
          name: 'Quillfeather Voucher',
          category_name: 'Retired',
          category_key: 'retired',
          updated_at: laravelNow,
        },
      },
    );
    for (const server of servers) {
      await until(
        'the cached page and its total follow',
        async () => (await page(server)).total === (await giftCardsNow(products)).total,
      );
      await until(
        'the cached search finds the new name',
        async () => (await page(server, search('quillfeather'))).total === 1,
      );
    }
    // The grams the gateway wrote (into its own collection) are of the new text, and the product
    // is as its writer left it.
    const written = await products.findOne({ _id: gift!._id });
    const row = await servers[0]!.testDb.db
      .collection(SEARCH_PROJECTION_COLLECTION)
      .findOne({ _id: gift!._id as never });
    expect(row!.search_text_hash).toBe(searchTextHash(searchableTextOf(written!)));
    expect(written!.updated_at).toBe(laravelNow);
    expect(written).not.toHaveProperty('search_grams');
  });
});

describe('a filter total', () => {
  let server: TestServer;
  let writer: MongoClient;
  let counts = 0;

  beforeAll(async () => {
    // No response cache: every page runs, and only the total may be reused.
    server = await startTestServer();
    server.database.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.commandName === 'aggregate' && !isBackgroundCommand(event.command) && isCount(event.command))
        counts++;
    });
    writer = await MongoClient.connect(server.testDb.uri);
  });
  afterAll(async () => {
    await writer?.close();
    await server?.stop();
  });

  it('is counted once for every page and repeat of its filter, and follows a change', async () => {
    const path = (n: number) => `/api/v1/products?category=Gift%20Cards&per_page=1&page=${n}`;
    counts = 0;
    const first = await page(server, path(1));
    expect(counts).toBe(1);
    for (let n = 2; n <= 4; n++) expect((await page(server, path(n))).total).toBe(first.total);
    await page(server, path(1));
    expect(counts).toBe(1);
    // Another filter is counted on its own.
    await page(server, '/api/v1/products?search=gift&per_page=1&page=2');
    expect(counts).toBe(2);

    const products: Products = writer.db(server.testDb.dbName).collection('products');
    const gift = await products.findOne({ category_key: 'gift cards' });
    await products.updateOne(
      { _id: gift!._id },
      { $set: { category_name: 'Retired', category_key: 'retired', updated_at: new Date() } },
    );
    // The log hands the change on with the document before it: the kept total moves by it, at
    // once, and is not counted again.
    expect((await page(server, path(2))).total).toBe(first.total - 1);
    expect((await page(server, path(3))).total).toBe(first.total - 1);
    expect(counts).toBe(2);
  });
});

function isCount(command: Document): boolean {
  return JSON.stringify(command.pipeline ?? []).includes('"$group":{"_id":1,"n":{"$sum":1}}');
}
