import { ObjectId, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forEachIdBatch } from '../../src/db/id-batches';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * A walk of a whole collection a query per batch (no cursor outlives DocumentDB's 60 s), in `_id`
 * order across every kind of `_id` other writers use: each document once, none left out.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase('id_batches');
});
afterAll(() => database?.close());

describe('forEachIdBatch', () => {
  it('visits every document once, in _id order, across numbers, text, ObjectIds, dates and booleans', async () => {
    // (The driver gives a document whose _id is null an ObjectId of its own: no null here.)
    const ids: unknown[] = [
      -5,
      1,
      2.5,
      3,
      10,
      '',
      'a',
      'b',
      'ca',
      new ObjectId('000000000000000000000001'),
      new ObjectId('ffffffffffffffffffffffff'),
      false,
      true,
      new Date(0),
      new Date(1_800_000_000_000),
    ];
    const docs = database.db.collection('walked');
    await docs.insertMany([...ids].reverse().map((_id) => ({ _id, n: 1 })) as Document[]);
    for (const batchSize of [1, 2, 3, 100]) {
      const seen: unknown[] = [];
      const sizes: number[] = [];
      await forEachIdBatch(docs, { batchSize, projection: { _id: 1 } }, async (batch) => {
        sizes.push(batch.length);
        seen.push(...batch.map((doc) => doc._id));
      });
      expect(seen, `batch size ${batchSize}`).toEqual(ids);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(batchSize);
    }
  });

  it('ends at once on an empty collection', async () => {
    let batches = 0;
    await forEachIdBatch(database.db.collection('empty'), { batchSize: 10 }, async () => void batches++);
    expect(batches).toBe(0);
  });
});
