import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase, ensureIndexes, INDEXES } from '../../src/db/mongo';
import { createOrderRepository } from '../../src/db/orders/order-repository';
import { createProductRepository } from '../../src/db/catalog/product-repository';
import { FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { randomBytes } from 'node:crypto';
import type { Database } from '../../src/db/mongo';

let database: Database;
beforeAll(async () => {
  database = await connectDatabase({
    uri: inject('mongoUri'),
    dbName: `indexes_${randomBytes(4).toString('hex')}`,
  });
});
afterAll(async () => {
  await database.db.dropDatabase();
  await database.close();
});

describe('ensureIndexes', () => {
  it('creates every index once and is a no-op afterwards', async () => {
    const first = await ensureIndexes(database.db);
    expect(first.sort()).toEqual(
      Object.entries(INDEXES)
        .flatMap(([collection, indexes]) => indexes.map((index) => `${collection}.${index.name}`))
        .sort(),
    );
    expect(await ensureIndexes(database.db)).toEqual([]);
    expect(await ensureIndexes(database.db)).toEqual([]);

    const products = await database.db.collection('products').listIndexes().toArray();
    expect(products.find((index) => index.name === 'category_key_1')).toMatchObject({
      key: { category_key: 1 },
    });
    const orders = await database.db.collection('orders').listIndexes().toArray();
    expect(orders.find((index) => index.name === 'id_1')).toMatchObject({ key: { id: 1 }, unique: true });
    // Lookups of documents another writer keyed its own way (issue 26). Not unique on purpose:
    // a constraint would refuse that writer's inserts, or fail at start on its data.
    expect(products.find((index) => index.name === 'id_1')).toEqual(
      expect.objectContaining({ key: { id: 1 } }),
    );
    expect(products.find((index) => index.name === 'id_1')?.unique).toBeUndefined();
    expect(orders.find((index) => index.name === 'ulid_1')).toEqual(
      expect.objectContaining({ key: { ulid: 1 } }),
    );
    expect(orders.find((index) => index.name === 'ulid_1')?.unique).toBeUndefined();
  });

  it('enforces uniqueness of product ids and order ULIDs: they are the primary keys', async () => {
    const products = createProductRepository(database.db);
    const product = FIXTURE_PRODUCTS[0]!;
    await products.insertMany([product]);
    await expect(
      products.insertMany([{ ...product, variant: { ...product.variant, id: 12345 } }]),
    ).rejects.toThrow(/duplicate key/i);
    const orders = createOrderRepository(database.db);
    const order = FIXTURE_ORDERS[0]!;
    await orders.insertMany([order]);
    await expect(orders.insertMany([{ ...order, id: 123456 }])).rejects.toThrow(/duplicate key/i);
  });
});
