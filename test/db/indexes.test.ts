import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureIndexes, INDEXES } from '../../src/db/mongo';
import { connectDatabase } from '../../src/db/mongo';
import { inject } from 'vitest';
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
    expect(products.find((index) => index.name === 'id_1')).toMatchObject({ key: { id: 1 }, unique: true });
    expect(products.find((index) => index.name === 'category_key_1_id_1')).toMatchObject({
      key: { category_key: 1, id: 1 },
    });
    const orders = await database.db.collection('orders').listIndexes().toArray();
    expect(orders.find((index) => index.name === 'ulid_1')).toMatchObject({ key: { ulid: 1 }, unique: true });
  });

  it('enforces uniqueness of order ULIDs', async () => {
    const orders = database.db.collection('orders');
    await orders.insertOne({ id: 1, ulid: '01KE78KGFSQ4ZC7N2XW8RTB3MD', items: [] });
    await expect(orders.insertOne({ id: 2, ulid: '01KE78KGFSQ4ZC7N2XW8RTB3MD', items: [] })).rejects.toThrow(
      /duplicate key/i,
    );
  });
});
