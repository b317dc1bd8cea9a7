import { Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { OrderDoc, ProductDoc } from '../../src/db/documents';
import { productRecord } from '../../src/db/records';
import { ensureIndexes, INDEXES } from '../../src/db/mongo';
import { createOrderRepository } from '../../src/db/orders/order-repository';
import { createProductRepository } from '../../src/db/catalog/product-repository';
import { FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { generateProduct } from '../../seed/generator';
import { loadFixtures, loadGenerated, seedFixturesIfEmpty, type LoadProgress } from '../../seed/load';
import { projectionRow } from '../../src/db/derived/search-projection';
import {
  projectionComplete,
  SEARCH_PROJECTION_COLLECTION,
} from '../../src/db/catalog/search-projection-mark';
import { openTestDatabase, type TestDatabase } from '../support/database';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await openTestDatabase('seed');
});

afterAll(async () => {
  await tdb?.close();
});

const productsOf = () => tdb.db.collection<ProductDoc>('products');
const rowsOf = () => tdb.db.collection(SEARCH_PROJECTION_COLLECTION);
const ordersOf = () => tdb.db.collection<OrderDoc>('orders');

async function counts() {
  return {
    products: await productsOf().countDocuments({}),
    orders: await ordersOf().countDocuments({}),
  };
}

// One database for the file, so the tests run in order and each sets up the state it needs.
describe('seed loading', () => {
  it('seedFixturesIfEmpty loads the fixtures into an empty database, then does nothing', async () => {
    expect(await counts()).toEqual({ products: 0, orders: 0 });
    expect(await seedFixturesIfEmpty(tdb.db)).toBe(true);
    expect(await counts()).toEqual({ products: FIXTURE_PRODUCTS.length, orders: FIXTURE_ORDERS.length });

    await productsOf().deleteOne({ id: 1 });
    expect(await seedFixturesIfEmpty(tdb.db)).toBe(false);
    expect(await counts()).toEqual({ products: FIXTURE_PRODUCTS.length - 1, orders: FIXTURE_ORDERS.length });
  });

  it('seedFixturesIfEmpty leaves a database alone when only one collection is empty', async () => {
    await productsOf().deleteMany({});
    expect(await seedFixturesIfEmpty(tdb.db)).toBe(false);
    expect(await counts()).toEqual({ products: 0, orders: FIXTURE_ORDERS.length });
  });

  it('loadFixtures replaces both collections with the fixtures, without touching the exports', async () => {
    await productsOf().insertOne(productRecord(generateProduct(1, 999)));
    expect(await loadFixtures(tdb.db)).toEqual({
      products: FIXTURE_PRODUCTS.length,
      orders: FIXTURE_ORDERS.length,
    });
    expect(await loadFixtures(tdb.db)).toEqual({
      products: FIXTURE_PRODUCTS.length,
      orders: FIXTURE_ORDERS.length,
    });
    expect(await counts()).toEqual({ products: FIXTURE_PRODUCTS.length, orders: FIXTURE_ORDERS.length });
    // The collections are emptied by dropping them; their indexes must come back.
    const indexes = (await productsOf().listIndexes().toArray()).map((index) => index.name);
    expect(indexes).toEqual(expect.arrayContaining(['_id_', ...INDEXES.products.map((index) => index.name)]));
    await expect(productsOf().insertOne(productRecord(FIXTURE_PRODUCTS[0]!))).rejects.toThrow(/duplicate/i);
    expect(FIXTURE_PRODUCTS.some((product) => '_id' in product)).toBe(false);
    expect(FIXTURE_ORDERS.some((order) => '_id' in order)).toBe(false);
  });

  it("drops the gram indexes earlier versions made on the owner's products (their grams now live apart)", async () => {
    await productsOf().createIndex({ search_grams: 1 }, { name: 'search_grams_1' });
    await productsOf().createIndex({ search_grams_version: 1 }, { name: 'search_grams_version_1' });
    await ensureIndexes(tdb.db);
    const names = (await productsOf().listIndexes().toArray()).map((index) => index.name);
    expect(names).not.toContain('search_grams_1');
    expect(names).not.toContain('search_grams_version_1');
    const rows = (await rowsOf().listIndexes().toArray()).map((index) => index.name);
    expect(rows).toEqual(expect.arrayContaining(['search_grams_1', 'search_grams_version_1']));
  });

  it('stores the fixtures exactly: read back through the repositories', async () => {
    const products = createProductRepository(tdb.db);
    const orders = createOrderRepository(tdb.db);
    const devforge = FIXTURE_PRODUCTS.find((product) => product.name.includes('C++'));
    const [stored] = await products.findByIds([devforge!.id]);
    expect(stored).toEqual(devforge);
    expect(stored?.created_at).toBeInstanceOf(Date);

    const first = FIXTURE_ORDERS[0]!;
    expect(await orders.findByUlid(first.ulid)).toEqual(first);
    expect(await orders.count()).toBe(FIXTURE_ORDERS.length);
    const page = await products.findPage({ words: [] }, 0, 100);
    expect(page.items.map((product) => product.id)).toEqual(FIXTURE_PRODUCTS.map((product) => product.id));
    expect(await products.count({ words: ['C++'] })).toBe(1);
    expect(await products.count({ words: ['café'] })).toBeGreaterThan(0);
    expect(await products.count({ words: ['.*'] })).toBe(0);
    expect(await products.count({ words: ['$where'] })).toBe(0);
  });

  it('loadGenerated replaces the data with generated documents in batches and reports progress', async () => {
    const progress: LoadProgress[] = [];
    const result = await loadGenerated(tdb.db, {
      seed: 7,
      products: 3000,
      orders: 1200,
      batchSize: 1000,
      onProgress: (update) => progress.push(update),
    });
    expect(result).toMatchObject({ products: 3000, orders: 1200, fixtures: { products: 0, orders: 0 } });
    expect(result.elapsedMs).toBeGreaterThan(0);
    expect(result.docsPerSecond).toBeGreaterThan(0);
    expect(await counts()).toEqual({ products: 3000, orders: 1200 });
    // Stored as generated; the grams search reads are in the gateway's own projection beside it.
    const generated = generateProduct(7, 1234);
    expect(await productsOf().findOne({ id: 1234 }, { projection: { _id: 0 } })).toEqual(generated);
    expect(await rowsOf().findOne({ _id: 1234 as never })).toEqual(
      projectionRow({ ...generated, _id: 1234 }),
    );
    expect(await rowsOf().countDocuments()).toBe(3000);
    expect(await projectionComplete(tdb.db)).toBe(true);
    expect(await ordersOf().countDocuments({ customer_id: 'cus_alice' })).toBe(0);

    expect(progress.length).toBe(5);
    expect(progress.at(-1)).toMatchObject({
      phase: 'orders',
      done: 1200,
      overallDone: 4200,
      overallTotal: 4200,
    });
    const overall = progress.map((update) => update.overallDone);
    expect(overall).toEqual([...overall].sort((a, b) => a - b));
  });

  it('loadGenerated withFixtures keeps the fixtures and continues the ids after them', async () => {
    const result = await loadGenerated(tdb.db, { seed: 7, products: 500, orders: 200, withFixtures: true });
    expect(result.fixtures).toEqual({ products: FIXTURE_PRODUCTS.length, orders: FIXTURE_ORDERS.length });
    expect(await counts()).toEqual({
      products: FIXTURE_PRODUCTS.length + 500,
      orders: FIXTURE_ORDERS.length + 200,
    });
    const lastFixtureId = Math.max(...FIXTURE_PRODUCTS.map((product) => product.id));
    const generated = generateProduct(7, lastFixtureId + 1);
    expect(await productsOf().findOne({ id: lastFixtureId + 1 }, { projection: { _id: 0 } })).toEqual(
      generated,
    );
    expect(await rowsOf().countDocuments()).toBe(FIXTURE_PRODUCTS.length + 500);
    const firstGenerated = await ordersOf().findOne({ id: FIXTURE_ORDERS.length + 1 });
    const lastFixtureItem = Math.max(
      ...FIXTURE_ORDERS.flatMap((order) => order.items.map((item) => item.id)),
    );
    expect(firstGenerated?.items[0]?.id).toBe(lastFixtureItem + 1);
    expect(await ordersOf().countDocuments({ customer_id: 'cus_alice' })).toBeGreaterThan(0);
  });

  it.each([true, false])(
    'loadGenerated (withFixtures: %s) that fails part way leaves no index dropped',
    async (withFixtures) => {
      // The second batch's insert is slow: the first one's failure must wait for it to settle.
      let unsettledInserts = 0;
      let calls = 0;
      const insertMany = Collection.prototype.insertMany;
      vi.spyOn(Collection.prototype, 'insertMany').mockImplementation(async function (
        this: Collection,
        ...args
      ) {
        unsettledInserts++;
        try {
          if (++calls === 2) await new Promise((resolve) => setTimeout(resolve, 500));
          return await insertMany.apply(this, args);
        } finally {
          unsettledInserts--;
        }
      });
      onTestFinished(() => {
        vi.restoreAllMocks();
      });
      const load = loadGenerated(tdb.db, {
        seed: 7,
        products: 300,
        orders: 0,
        batchSize: 100,
        withFixtures,
        onProgress: () => {
          // As a full disk (ENOSPC) would, after the indexes were dropped for the load.
          throw new Error('no space left on device');
        },
      });
      await expect(load).rejects.toThrow('no space left on device');
      // It failed only once every insert in flight had settled: none lands after the caller moved on.
      expect(unsettledInserts).toBe(0);
      const names = async (collection: string) =>
        (await tdb.db.collection(collection).listIndexes().toArray()).map((index) => index.name as string);
      expect(await names('products')).toEqual(
        expect.arrayContaining(INDEXES.products.map((index) => index.name as string)),
      );
      expect(await names('orders')).toEqual(
        expect.arrayContaining(INDEXES.orders.map((index) => index.name as string)),
      );
    },
  );
});
