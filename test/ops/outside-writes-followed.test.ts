import { MongoClient, type Collection, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { SEARCH_GRAMS_VERSION, searchableTextOf, searchTextHash } from '../../src/db/catalog/search-grams';
import { productFilter } from '../../src/db/catalog/product-plans';
import { createProductRepository } from '../../src/db/catalog/product-repository';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { generateProduct } from '../../seed/generator';
import { POLLING_FEED, startTestServer, type TestServer } from '../support/server';

/**
 * Polling, the last resort (test/ops/log-feed.test.ts covers the log). Another application writes the catalogue the way a Laravel app or an importer does: the plain
 * driver, `$set` of the changed fields plus `updated_at`, copies that keep the copied grams,
 * inserts without grams, deletes. Every answer, at every moment (right after the writes, before
 * the change feed has run, and after), equals an independent `$regex` scan: ids and totals, REST
 * and GraphQL, first pages and deep ones. The feed then makes the grams current within its bound.
 */

let server: TestServer;
let writer: MongoClient;
/** Keyed as the writer chose: numbers here (the driver's types assume ObjectIds). */
let products: Collection<{ _id: unknown; [field: string]: unknown }>;

const EXTRA = 60;
const PAGE = 7;
const GRACE_MS = 5_000;

/** The independent answer: the search's regexes alone, in `_id` order. */
async function scanIds(term: string): Promise<number[]> {
  const rows = await products
    .find(productFilter(criteriaFor(term, undefined)) as Document, { projection: { id: 1 } })
    .sort({ _id: 1 })
    .toArray();
  return rows.map((row) => row.id as number);
}

async function restPages(path: string): Promise<{ ids: number[]; totals: number[] }> {
  const ids: number[] = [];
  const totals: number[] = [];
  for (let page = 1; ; page++) {
    const response = await server.request(`${path}&per_page=${PAGE}&page=${page}`);
    const body = (await response.json()) as {
      data: { id: number }[];
      meta: { total: number; last_page: number };
    };
    expect(response.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    ids.push(...body.data.map((product) => product.id));
    totals.push(body.meta.total);
    if (page >= body.meta.last_page) return { ids, totals };
  }
}

async function graphqlPages(term: string, backwards = false): Promise<{ ids: number[]; totals: number[] }> {
  const ids: number[] = [];
  const totals: number[] = [];
  let cursor: string | null = null;
  for (;;) {
    const reply = await server.graphql(
      `query ($term: String!, $size: Int, $cursor: String) {
        searchProducts(term: $term, ${backwards ? 'last: $size, before: $cursor' : 'first: $size, after: $cursor'}) {
          totalCount
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
          edges { node { databaseId } }
        }
      }`,
      { term, size: PAGE, cursor },
    );
    expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
    const connection = reply.body.data!.searchProducts as {
      totalCount: number;
      pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
      edges: { node: { databaseId: number } }[];
    };
    const page = connection.edges.map((edge) => edge.node.databaseId);
    if (backwards) ids.unshift(...page);
    else ids.push(...page);
    totals.push(connection.totalCount);
    const more = backwards ? connection.pageInfo.hasPreviousPage : connection.pageInfo.hasNextPage;
    if (!more) return { ids, totals };
    cursor = backwards ? connection.pageInfo.startCursor : connection.pageInfo.endCursor;
  }
}

/** Every way a client reads a search agrees with the scan. */
async function expectExact(term: string): Promise<void> {
  const expected = await scanIds(term);
  const exact = { ids: expected, totals: expect.arrayContaining([expected.length]) as unknown };
  const encoded = encodeURIComponent(term);
  for (const [name, answer] of [
    ['REST ?search=', await restPages(`/api/v1/products?search=${encoded}`)],
    ['REST /search', await restPages(`/api/v1/products/search?term=${encoded}`)],
    ['GraphQL forward', await graphqlPages(term)],
    ['GraphQL backward', await graphqlPages(term, true)],
  ] as const) {
    expect(answer, `${name} ${term}`).toEqual(exact);
    expect(new Set(answer.totals), `${name} ${term} totals`).toEqual(new Set([expected.length]));
  }
}

async function untilTrue(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + GRACE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${GRACE_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The product's row in the search projection holds grams of its text now, by the current rules. */
async function rowCurrent(filter: Document): Promise<boolean> {
  const doc = await products.findOne(filter);
  const row =
    doc &&
    (await server.testDb.db.collection(SEARCH_PROJECTION_COLLECTION).findOne({ _id: doc._id as never }));
  return (
    !!row &&
    row.search_grams_version === SEARCH_GRAMS_VERSION &&
    row.search_text_hash === searchTextHash(searchableTextOf(doc))
  );
}

const TERMS = ['glimmerquartz', 'brindlewick', 'snowquill', 'northwind', 'card', 'gift card', 'eur'];

/** The server (fixtures and enough products that a search has deep pages) and the writer's client. */
async function open(env: Record<string, string> = {}): Promise<void> {
  server = await startTestServer({ env: { ...POLLING_FEED, ...env } });
  const extra = Array.from({ length: EXTRA }, (_, index) => {
    const product = generateProduct(7, 500 + index);
    return { ...product, variant: { ...product.variant, id: 700_000 + index } };
  });
  // Loaded as the seed loads them (rows in the search projection beside them).
  await createProductRepository(server.testDb.db).insertMany(extra);
  writer = await MongoClient.connect(server.testDb.uri);
  products = writer.db(server.testDb.dbName).collection('products');
}

async function close(): Promise<void> {
  await writer?.close();
  await server?.stop();
}

describe('writes of another application', () => {
  beforeAll(() => open({ CHANGE_FEED_RECONCILE_MS: '1000' }));
  afterAll(close);

  it('are searched exactly at once, and get current grams from the feed within its bound', async () => {
    const [renamed, copied, deleted, repriced] = await products
      .find({ name: /card/i })
      .sort({ _id: 1 })
      .limit(4)
      .toArray();
    const oldWord = String(renamed!.name).split(' ')[0]!.toLowerCase();
    const now = () => new Date();
    const maxId = (await products.find().sort({ _id: -1 }).limit(1).next())!.id as number;

    // Polling sees a deletion only when its count of the collection moves (the projection's row
    // is then removed by a sync): within CHANGE_FEED_RECONCILE_MS, 1 s here.
    await products.deleteOne({ _id: deleted!._id });
    await untilTrue('the deleted product leaves the search projection', async () => {
      const rows = server.testDb.db.collection(SEARCH_PROJECTION_COLLECTION);
      return (await rows.findOne({ _id: deleted!._id as never })) === null;
    });
    await products.updateOne(
      { _id: renamed!._id },
      { $set: { name: 'Glimmerquartz Voucher', updated_at: now() } },
    );
    // A copy under a new name that keeps the copied grams (and their hash).
    const { _id: _copiedId, ...copy } = copied!;
    await products.insertOne({
      ...copy,
      _id: maxId + 1,
      id: maxId + 1,
      name: 'Brindlewick Card',
      variant: { ...(copy.variant as object), id: 990_001 },
      updated_at: now(),
    });
    await products.updateOne(
      { _id: repriced!._id },
      { $set: { 'variant.price.amount': 1, updated_at: now() } },
    );

    // Right away: before the feed has had a chance to run.
    for (const term of [...TERMS, oldWord]) await expectExact(term);
    expect(await scanIds('glimmerquartz')).toEqual([renamed!.id]);
    expect(await scanIds('brindlewick')).toEqual([maxId + 1]);

    // One without any grams.
    const {
      _id: _plainId,
      search_grams: _g,
      search_grams_version: _v,
      search_text_hash: _h,
      ...plain
    } = copy;
    await products.insertOne({
      ...plain,
      _id: maxId + 2,
      id: maxId + 2,
      name: 'Snowquill Gift Card',
      variant: { ...(plain.variant as object), id: 990_002 },
      updated_at: now(),
    });
    for (const term of [...TERMS, oldWord]) await expectExact(term);
    expect(await scanIds('snowquill')).toEqual([maxId + 2]);

    await untilTrue('the written products have grams of their text now', async () => {
      const current = await Promise.all(
        [renamed!.id, maxId + 1, maxId + 2, repriced!.id].map((id) => rowCurrent({ id })),
      );
      return current.every(Boolean);
    });
    for (const term of [...TERMS, oldWord]) await expectExact(term);
  });

  it('does not see the gateway write its grams as a change (no feedback loop)', async () => {
    const stamp = new Date();
    await products.updateOne({ id: 1 }, { $set: { name: 'Marigold Gift Card', updated_at: stamp } });
    await untilTrue('the renamed product has current grams', async () => rowCurrent({ id: 1 }));
    // The grams went into the gateway's own collection: the product is as its writer left it.
    expect((await products.findOne({ id: 1 }))!.updated_at).toEqual(stamp);
    const position = await writer
      .db(server.testDb.dbName)
      .collection('change_feed_positions')
      .findOne({ _id: 'products' as never });
    const newest = await products.find().sort({ updated_at: -1 }).limit(1).next();
    expect(position?.updated_at).toEqual(newest!.updated_at);
    await expectExact('marigold');
  });

  it('follows a writer whose clock is a little behind: a rename stamped before a write already handled', async () => {
    const stamp = new Date();
    await products.updateOne({ id: 2 }, { $set: { name: 'Tidewhistle Gift Card', updated_at: stamp } });
    await untilTrue('the first rename is handled', async () => rowCurrent({ id: 2 }));
    const behind = (await products.findOne({ name: /card/i, id: { $ne: 2 } }, { sort: { _id: -1 } }))!;
    const oldWord = String(behind.name).split(' ')[0]!.toLowerCase();
    // Committed after the first rename was handled, stamped two seconds before it.
    await products.updateOne(
      { _id: behind._id },
      { $set: { name: 'Quintessa Voucher', updated_at: new Date(stamp.getTime() - 2_000) } },
    );
    for (const term of ['quintessa', oldWord, 'tidewhistle']) await expectExact(term);
    expect(await scanIds('quintessa')).toEqual([behind.id]);
    await untilTrue('the late rename gets grams of its text', async () => rowCurrent({ _id: behind._id }));
    for (const term of ['quintessa', oldWord]) await expectExact(term);
  });
});

describe('writes of another application while the feed has not read them yet', () => {
  // The feed's next read is a minute away: only the search's pending path can find them.
  beforeAll(() => open({ CHANGE_FEED_INTERVAL_MS: '60000' }));
  afterAll(close);

  it('are found by their new words, not their old ones, on every page', async () => {
    const [renamed, copied] = await products.find({ name: /card/i }).sort({ _id: 1 }).limit(2).toArray();
    const oldWord = String(renamed!.name).split(' ')[0]!.toLowerCase();
    const maxId = (await products.find().sort({ _id: -1 }).limit(1).next())!.id as number;
    await products.updateOne(
      { _id: renamed!._id },
      { $set: { name: 'Glimmerquartz Voucher', updated_at: new Date() } },
    );
    const { _id, search_grams: _g, search_grams_version: _v, search_text_hash: _h, ...plain } = copied!;
    const variant = copied!.variant as object;
    await products.insertMany(
      [
        { ...copied!, _id: maxId + 1, id: maxId + 1, name: 'Brindlewick Card', updated_at: new Date() },
        { ...plain, _id: maxId + 2, id: maxId + 2, name: 'Snowquill Gift Card', updated_at: new Date() },
      ].map((doc, n) => ({ ...doc, variant: { ...variant, id: 990_101 + n } })),
    );
    for (const term of [...TERMS, oldWord]) await expectExact(term);
    expect(await scanIds('glimmerquartz')).toEqual([renamed!.id]);
    // Nothing has given them grams: the answers above came from the pending path.
    expect(await rowCurrent({ _id: renamed!._id })).toBe(false);
  });

  it('are found the same way when `updated_at` is text as Laravel writes it', async () => {
    const renamed = (await products.findOne({ name: /card/i }, { sort: { _id: -1 } }))!;
    const oldWord = String(renamed.name).split(' ')[0]!.toLowerCase();
    const laravelNow = new Date().toISOString().slice(0, 19).replace('T', ' ');
    await products.updateOne(
      { _id: renamed._id },
      { $set: { name: 'Quintessa Card', updated_at: laravelNow } },
    );
    for (const term of ['quintessa', oldWord, 'card']) await expectExact(term);
    expect(await scanIds('quintessa')).toEqual([renamed.id]);
    expect(await rowCurrent({ _id: renamed._id })).toBe(false);
  });
});
