import { MongoClient, ObjectId, type CommandStartedEvent, type Collection, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { productFilter } from '../../src/db/catalog/product-plans';
import { createProductRepository } from '../../src/db/catalog/product-repository';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { POSITIONS_COLLECTION } from '../../src/db/feed/watermarks';
import { SEARCH_STATE_COLLECTION } from '../../src/db/derived/search-state';
import { generateProduct } from '../../seed/generator';
import { loadFixtures } from '../../seed/load';
import { isBackgroundCommand } from '../support/background-commands';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { POLLING_FEED, startTestServer, type TestServer } from '../support/server';

/**
 * A filter's kept total while another application's writes are pending (not yet handed on by the
 * change feed): adjusted by the pending products' before-images and their state now, not counted
 * again, and still equal to an independent `$regex` scan after every write: renames, inserts
 * (number and ObjectId keys), category changes, a Laravel text date; deletions within the bound
 * of the feed's count of the collection.
 */

type Products = Collection<{ _id: unknown; [field: string]: unknown }>;

/** The filters read before the writes (their totals kept), as REST query strings: [search, category]. */
const FILTERS: [string | undefined, string | undefined][] = [
  [undefined, 'Gift Cards'],
  ['card', undefined],
  ['gift card', undefined],
  ['card', 'Gift Cards'],
  ['eur', undefined],
  [undefined, undefined],
];

function restPath([search, category]: [string | undefined, string | undefined], page = 1): string {
  const query = new URLSearchParams({ per_page: '5', page: String(page) });
  if (search !== undefined) query.set('search', search);
  if (category !== undefined) query.set('category', category);
  return `/api/v1/products?${query.toString()}`;
}

async function scan(products: Products, [search, category]: [string | undefined, string | undefined]) {
  const rows = await products
    .find(productFilter(criteriaFor(search, category)) as Document, { projection: { id: 1 } })
    .sort({ _id: 1 })
    .toArray();
  return rows.map((row) => row.id as number);
}

async function restAnswer(server: TestServer, path: string) {
  const response = await server.request(path);
  const body = (await response.json()) as { data: { id: number }[]; meta: { total: number } };
  expect(response.status, JSON.stringify(body).slice(0, 300)).toBe(200);
  return { ids: body.data.map((product) => product.id), total: body.meta.total };
}

async function graphqlTotal(server: TestServer, term: string): Promise<number> {
  const reply = await server.graphql(
    'query ($term: String!) { searchProducts(term: $term, first: 3) { totalCount } }',
    { term },
  );
  expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
  return (reply.body.data!.searchProducts as { totalCount: number }).totalCount;
}

/** Every filter's total and first page, REST and (for searches) GraphQL, equal the scan now. */
async function expectExact(server: TestServer, products: Products): Promise<void> {
  for (const filter of FILTERS) {
    const expected = await scan(products, filter);
    const first = await restAnswer(server, restPath(filter));
    expect(first, JSON.stringify(filter)).toEqual({ ids: expected.slice(0, 5), total: expected.length });
    expect((await restAnswer(server, restPath(filter, 2))).total, JSON.stringify(filter)).toBe(
      expected.length,
    );
    if (filter[0] !== undefined && filter[1] === undefined)
      expect(await graphqlTotal(server, filter[0]), filter[0]).toBe(expected.length);
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A count of a whole filter over the products (not one restricted to listed `_id`s, as the
 * adjustment's and a deep pending page's are).
 */
function isWholeCount(event: CommandStartedEvent): boolean {
  const pipeline = JSON.stringify(event.command.pipeline ?? []);
  return (
    event.commandName === 'aggregate' &&
    (event.command.aggregate === 'products' || event.command.aggregate === SEARCH_PROJECTION_COLLECTION) &&
    !isBackgroundCommand(event.command) &&
    pipeline.includes('"$group":{"_id":1,"n":{"$sum":1}}') &&
    !pipeline.includes('"_id":{"$in"') &&
    !pipeline.includes('"_id":{"$nin"')
  );
}

/** A database with the fixtures and 60 generated products, and a server over it once its before-images are complete. */
async function open(env: Record<string, string>) {
  const database: TestDatabase = await openTestDatabase('pending_totals');
  await loadFixtures(database.db);
  await createProductRepository(database.db).insertMany(
    Array.from({ length: 60 }, (_, n) => ({
      ...generateProduct(7, 500 + n),
      variant: { ...generateProduct(7, 500 + n).variant, id: 700_000 + n },
    })),
  );
  const server = await startTestServer({ database, env: { ...POLLING_FEED, ...env } });
  let wholeCounts = 0;
  server.database.client.on('commandStarted', (event: CommandStartedEvent) => {
    if (isWholeCount(event)) wholeCounts++;
  });
  const writer = await MongoClient.connect(database.uri);
  const products: Products = writer.db(database.dbName).collection('products');
  const marks = writer.db(database.dbName).collection<{ _id: string }>(POSITIONS_COLLECTION);
  await until('the before-images are backfilled', async () =>
    Boolean(await marks.findOne({ _id: SEARCH_STATE_COLLECTION })),
  );
  return {
    server,
    writer,
    products,
    wholeCounts: () => wholeCounts,
    async close() {
      await writer.close();
      await server.stop();
      await database.close();
    },
  };
}

type Opened = Awaited<ReturnType<typeof open>>;

/**
 * Each filter counted with nothing pending and kept: a round that counts nothing after one that
 * counted (its totals confirmed clean meanwhile: a count that saw a pending write is dropped once
 * the feed hands it on, and then counted again).
 */
async function keepTotals(opened: Opened): Promise<void> {
  const round = async () => {
    for (const filter of FILTERS) await restAnswer(opened.server, restPath(filter));
    for (const [term] of FILTERS) if (term !== undefined) await graphqlTotal(opened.server, term);
  };
  await until('the totals are kept', async () => {
    await round();
    await pause(300);
    const before = opened.wholeCounts();
    await round();
    return opened.wholeCounts() === before;
  });
}

describe('kept totals while outside writes are pending', () => {
  let opened: Opened;
  // The feed's next read is a minute away: every write below stays pending.
  beforeAll(async () => (opened = await open({ CHANGE_FEED_INTERVAL_MS: '60000' })));
  afterAll(() => opened?.close());

  it('are adjusted by the pending products, not counted again, and equal the scan after every write', async () => {
    const { products } = opened;
    await keepTotals(opened);
    const gifts = await products.find({ category_key: 'gift cards' }).sort({ _id: 1 }).limit(3).toArray();
    const other = (await products.findOne({ category_key: { $ne: 'gift cards' }, name: /./ }))!;
    const maxId = (await products.find().sort({ _id: -1 }).limit(1).next())!.id as number;
    const template = gifts[0]!;
    const { _id, search_grams: _g, search_grams_version: _v, search_text_hash: _h, ...plain } = template;
    const variant = template.variant as object;
    const writes: (() => Promise<unknown>)[] = [
      () =>
        products.updateOne(
          { _id: gifts[0]!._id },
          { $set: { name: 'Glimmerquartz Voucher', updated_at: new Date() } },
        ),
      () =>
        products.updateOne(
          { _id: gifts[1]!._id },
          { $set: { category_name: 'Retired', category_key: 'retired', updated_at: new Date() } },
        ),
      () =>
        products.updateOne(
          { _id: other._id },
          { $set: { category_name: 'Gift Cards', category_key: 'gift cards', updated_at: new Date() } },
        ),
      () =>
        products.insertOne({
          ...plain,
          _id: maxId + 1,
          id: maxId + 1,
          name: 'Snowquill Gift Card',
          variant: { ...variant, id: 990_001 },
          updated_at: new Date(),
        }),
      // Keyed the way the driver keys by default, and it copies the template's grams.
      () =>
        products.insertOne({
          ...template,
          _id: new ObjectId(),
          id: maxId + 2,
          name: 'Brindlewick Card',
          variant: { ...variant, id: 990_002 },
          updated_at: new Date(),
        }),
      // As a Laravel app stamps it: text, whole seconds, UTC.
      () =>
        products.updateOne(
          { _id: gifts[2]!._id },
          {
            $set: {
              name: 'Quintessa Euro Voucher',
              updated_at: new Date().toISOString().slice(0, 19).replace('T', ' '),
            },
          },
        ),
      // The first one again, back into the words it had.
      () =>
        products.updateOne({ _id: gifts[0]!._id }, { $set: { name: template.name, updated_at: new Date() } }),
    ];
    for (const write of writes) {
      await write();
      const before = opened.wholeCounts();
      await expectExact(opened.server, products);
      expect(opened.wholeCounts(), 'no filter counted again while writes are pending').toBe(before);
    }
    // Nothing was handed on: the before-images are still those of before the writes.
    const states = opened.writer.db(opened.server.testDb.dbName).collection(SEARCH_STATE_COLLECTION);
    expect(await states.findOne({ _id: gifts[1]!._id as never })).toMatchObject({
      category_key: 'gift cards',
    });
  });
});

describe('kept totals while the feed hands writes on', () => {
  let opened: Opened;
  beforeAll(async () => (opened = await open({ CHANGE_FEED_RECONCILE_MS: '1000' })));
  afterAll(() => opened?.close());

  it('equal the scan after every write, as the feed moves the before-images', async () => {
    const { products } = opened;
    await keepTotals(opened);
    const gifts = await products.find({ category_key: 'gift cards' }).sort({ _id: -1 }).limit(4).toArray();
    for (const [n, gift] of gifts.entries()) {
      await products.updateOne(
        { _id: gift._id },
        n % 2 === 0
          ? { $set: { name: `Northwind Parcel ${n}`, updated_at: new Date() } }
          : { $set: { category_name: 'Retired', category_key: 'retired', updated_at: new Date() } },
      );
      await expectExact(opened.server, products);
      await pause(400 * n);
      await expectExact(opened.server, products);
    }
    // The feed wrote the before-images of what it handed on.
    const states = opened.writer.db(opened.server.testDb.dbName).collection(SEARCH_STATE_COLLECTION);
    await until('the before-images follow', async () => {
      const state = await states.findOne({ _id: gifts[1]!._id as never });
      return state?.category_key === 'retired';
    });
  });

  it('follow a deletion within the bound of the feed count of the collection', async () => {
    const { products } = opened;
    await keepTotals(opened);
    const gift = (await products.findOne({ category_key: 'gift cards' }, { sort: { _id: 1 } }))!;
    await products.deleteOne({ _id: gift._id });
    // With a write pending beside it, as without: the deletion shows once the feed's count notices it.
    await products.updateOne(
      { _id: (await products.findOne({}))!._id },
      { $set: { updated_at: new Date() } },
    );
    await until('the deletion shows', async () => {
      try {
        await expectExact(opened.server, products);
        return true;
      } catch {
        return false;
      }
    });
  });
});
