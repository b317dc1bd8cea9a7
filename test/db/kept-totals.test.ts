import type { Collection, Db, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChangeFeed, type ChangeFeed } from '../../src/db/change-feed';
import { createProductRepository } from '../../src/db/catalog/product-repository';
import { productRecord } from '../../src/db/records';
import { createTotalCache } from '../../src/db/catalog/total-cache';
import { backfillStates, SEARCH_STATE_COLLECTION, writeStates } from '../../src/db/derived/search-state';
import { generateProduct } from '../../seed/generator';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * A kept total and an outside write that race: the count reads the collection before the write
 * commits, the change feed hands the write on (dropping the kept totals), and only then does the
 * count's answer come back. That answer must not be kept. The race is forced, not hoped for: the
 * products collection the repository reads holds each count's answer until the test lets it go.
 */

let tdb: TestDatabase;
let feed: ChangeFeed<Document>;
let products: Collection<Document>;
const handed = new Set<string>();

/**
 * A gate on one method of the collections `db` hands out: armed, each call `holds` picks waits
 * for `release`, after its answer (`countDocuments`) or before its read (`aggregate`), and
 * `hasReached` resolves once one got there.
 */
function gated(db: Db, method: 'countDocuments' | 'aggregate', holds: (collection: string) => boolean) {
  let gate: { reached: () => void; released: Promise<void> } | undefined;
  const hold = async () => {
    const held = gate;
    if (!held) return;
    held.reached();
    await held.released;
  };
  const proxied = new Proxy(db, {
    get(target, property) {
      if (property !== 'collection') return Reflect.get(target, property, target) as unknown;
      return (name: string) => {
        const collection = target.collection(name);
        return new Proxy(collection, {
          get(inner, key) {
            const value = Reflect.get(inner, key, inner) as unknown;
            if (typeof value !== 'function') return value;
            if (key !== method || !holds(name)) return value.bind(inner) as unknown;
            if (method === 'countDocuments')
              return async (...args: unknown[]) => {
                const answer = (await (value as (...a: unknown[]) => Promise<number>).apply(
                  inner,
                  args,
                )) as number;
                await hold();
                return answer;
              };
            return (pipeline: Document[], options?: object) => ({
              async toArray() {
                await hold();
                return inner.aggregate(pipeline, options).toArray();
              },
            });
          },
        });
      };
    },
  });
  return {
    db: proxied,
    arm() {
      let reached!: () => void;
      let release!: () => void;
      const hasReached = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      gate = { reached, released };
      return {
        hasReached,
        release: () => {
          gate = undefined;
          release();
        },
      };
    },
  };
}

/** Count answers held (a count's read done, its answer not yet back). */
const gatedCounts = (db: Db) => gated(db, 'countDocuments', () => true);
/** The adjustments' reads of the before-images held before they run. */
const gatedAdjustments = (db: Db) => gated(db, 'aggregate', (name) => name === SEARCH_STATE_COLLECTION);

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  tdb = await openTestDatabase('kept_totals');
  products = tdb.db.collection('products');
  await products.insertMany(
    Array.from({ length: 40 }, (_, n) => productRecord(generateProduct(3, n + 1))) as Document[],
  );
  feed = await openChangeFeed<Document>(tdb.db, 'products', {
    intervalMs: 100,
    batchSize: 500,
    reconcileMs: 60_000,
    lookBackMs: 5_000,
    exclude: ['search_grams'],
  });
  feed.subscribe(({ changes }) => {
    for (const change of changes) handed.add(String(change._id));
  });
});
afterAll(async () => {
  await feed?.close();
  await tdb?.close();
});

describe('a kept total and a change committed while it is counted', () => {
  it('is not kept when the feed handed the change on before the count came back', async () => {
    const totals = createTotalCache();
    // The server's wiring (src/app.ts): every batch the feed hands on drops the kept totals.
    feed.subscribe(totals.invalidate);
    const gate = gatedCounts(tdb.db);
    const repository = createProductRepository(gate.db, { feed, totals });
    const one = (await products.findOne({}, { sort: { _id: 1 } }))!;
    const criteria = { words: [], category: String(one.category_name) };
    const inCategory = () => products.countDocuments({ category_key: one.category_key });
    const before = await inCategory();
    await until('nothing unhandled', async () => !(await feed.hasUnhandled()));

    const held = gate.arm();
    const counting = repository.count(criteria);
    await held.hasReached;
    handed.clear();
    await products.updateOne(
      { _id: one._id },
      { $set: { category_name: 'Retired', category_key: 'retired', updated_at: new Date() } },
    );
    await until('the feed handed the change on', () => handed.has(String(one._id)));
    held.release();
    // That request's answer is as of its read; the next one must not reuse it.
    expect(await counting).toBe(before);
    expect(await repository.count(criteria)).toBe(before - 1);
    expect(await inCategory()).toBe(before - 1);
  });

  it('is kept, and reused, when nothing changed while it was counted', async () => {
    const totals = createTotalCache();
    feed.subscribe(totals.invalidate);
    const gate = gatedCounts(tdb.db);
    const repository = createProductRepository(gate.db, { feed, totals });
    const one = (await products.findOne({ category_key: { $ne: 'retired' } }, { sort: { _id: -1 } }))!;
    const criteria = { words: [], category: String(one.category_name) };
    await until('nothing unhandled', async () => !(await feed.hasUnhandled()));
    const held = gate.arm();
    const counting = repository.count(criteria);
    await held.hasReached;
    held.release();
    const total = await counting;
    // Changed behind the repository's back without `updated_at`: only a kept total still says `total`.
    await products.updateOne({ _id: one._id }, { $set: { category_key: 'hidden' } });
    expect(await repository.count(criteria)).toBe(total);
    await products.updateOne({ _id: one._id }, { $set: { category_key: one.category_key } });
  });
});

describe('a kept total adjusted while writes are pending', () => {
  it('is not served when the feed handed a change on (and moved its before-image) during the adjustment', async () => {
    const totals = createTotalCache();
    // The server's order (src/server.ts): the totals are dropped, then the before-images written.
    feed.subscribe(totals.invalidate);
    feed.subscribe(({ changes }) => writeStates(tdb.db, changes));
    expect(await backfillStates(tdb.db)).toBe(true);
    const gate = gatedAdjustments(tdb.db);
    const repository = createProductRepository(gate.db, {
      feed,
      totals,
      beforeImages: { ready: () => true },
    });
    const one = (await products.findOne(
      { category_key: { $nin: ['retired', 'hidden'] } },
      { sort: { _id: 1 } },
    ))!;
    const criteria = { words: [], category: String(one.category_name) };
    const inCategory = () => products.countDocuments({ category_key: one.category_key });
    const before = await inCategory();
    await until('nothing unhandled', async () => !(await feed.hasUnhandled()));
    expect(await repository.count(criteria)).toBe(before);
    await until(
      'the total is kept clean',
      () => totals.clean(JSON.stringify([String(one.category_name).toLowerCase(), []])) !== undefined,
    );

    // Pending: the next count adjusts the kept total, and its read of the before-images is held.
    await products.updateOne(
      { _id: one._id },
      { $set: { category_name: 'Retired', category_key: 'retired', updated_at: new Date() } },
    );
    const held = gate.arm();
    const counting = repository.count(criteria);
    await held.hasReached;
    const states = tdb.db.collection(SEARCH_STATE_COLLECTION);
    await until(
      'the feed handed the change on and wrote its before-image',
      async () => (await states.findOne({ _id: one._id as never }))?.category_key === 'retired',
    );
    held.release();
    // The before-image read now is newer than the kept total: that adjustment (the old total) is dropped.
    expect(await counting).toBe(before - 1);
    expect(await inCategory()).toBe(before - 1);
  });
});

describe('before-images in a fleet (every instance writes them)', () => {
  it('an image another instance wrote of a write this one has not handed on makes it count, not adjust', async () => {
    // This instance's feed reads once a minute: the write below stays pending here. (No look-back:
    // the earlier tests' writes of the last seconds would keep it from ever being caught up.)
    const slow = await openChangeFeed<Document>(tdb.db, 'products', {
      intervalMs: 60_000,
      batchSize: 500,
      reconcileMs: 3_600_000,
      lookBackMs: 0,
      exclude: ['search_grams'],
    });
    try {
      const totals = createTotalCache();
      slow.subscribe(totals.invalidate);
      slow.subscribe(({ changes }) => writeStates(tdb.db, changes));
      expect(await backfillStates(tdb.db)).toBe(true);
      const repository = createProductRepository(tdb.db, {
        feed: slow,
        totals,
        beforeImages: { ready: () => true },
      });
      const one = (await products.findOne({ category_key: { $nin: ['retired', 'hidden', 'moved'] } }))!;
      const criteria = { words: [], category: String(one.category_name) };
      const key = JSON.stringify([criteria.category.toLowerCase(), []]);
      const inCategory = () => products.countDocuments({ category_key: one.category_key });
      const before = await inCategory();
      expect(await repository.count(criteria)).toBe(before);
      await until('the total kept and clean', async () => totals.clean(key) !== undefined);

      await products.updateOne(
        { _id: one._id },
        { $set: { category_name: 'Fleet', category_key: 'fleet', updated_at: new Date() } },
      );
      // Another instance, its feed ahead of this one's, hands the write on: it writes the image.
      await writeStates(tdb.db, [{ _id: one._id, document: await products.findOne({ _id: one._id }) }]);
      // Adjusted by that image, the total would stay `before` (kept − 0 + 0).
      expect(await repository.count(criteria)).toBe(before - 1);
    } finally {
      await slow.close();
    }
  });

  it('an instance behind the others writes the product as it is now, not the state it was handed', async () => {
    const states = tdb.db.collection(SEARCH_STATE_COLLECTION);
    const one = (await products.findOne({}, { sort: { _id: -1 } }))!;
    await products.updateOne({ _id: one._id }, { $set: { name: 'Later Name', updated_at: new Date() } });
    // Handed the earlier state (as a late instance's feed would), it images the later one.
    await writeStates(tdb.db, [{ _id: one._id, document: { ...one, name: 'Earlier Name' } }]);
    expect((await states.findOne({ _id: one._id as never }))?.name).toBe('Later Name');
    // A product gone since is gone from the images too.
    await writeStates(tdb.db, [{ _id: 'never-there', document: { _id: 'never-there', name: 'x' } }]);
    expect(await states.findOne({ _id: 'never-there' as never })).toBeNull();
  });
});

describe('the catalogue counts by category and brand', () => {
  const countOf = (groups: { key: string; productCount: number }[], key: unknown) =>
    groups.find((group) => group.key === key)?.productCount ?? 0;

  it('are kept while nothing changed, and counted again once the feed hands a change on', async () => {
    const totals = createTotalCache();
    feed.subscribe(totals.invalidate);
    const repository = createProductRepository(tdb.db, { feed, totals });
    const one = (await products.findOne({ category_key: { $ne: 'retired' } }, { sort: { _id: 1 } }))!;
    await until('nothing unhandled', async () => !(await feed.hasUnhandled()));
    const categories = await repository.countByCategory();
    const brands = await repository.countByBrand();
    const before = countOf(categories, one.category_key);
    expect(before).toBe(await products.countDocuments({ category_key: one.category_key }));

    // Changed behind the repository's back without `updated_at`: only kept counts still say `before`.
    await products.updateOne({ _id: one._id }, { $set: { category_key: 'hidden' } });
    expect(countOf(await repository.countByCategory(), one.category_key)).toBe(before);
    expect(await repository.countByBrand()).toEqual(brands);

    // A change the feed sees drops them: the next answer is counted.
    handed.clear();
    await products.updateOne(
      { _id: one._id },
      { $set: { category_key: 'moved', category_name: 'Moved', updated_at: new Date() } },
    );
    await until('the feed handed the change on', () => handed.has(String(one._id)));
    const after = await repository.countByCategory();
    expect(countOf(after, one.category_key)).toBe(before - 1);
    expect(countOf(after, 'moved')).toBe(1);
    await products.updateOne(
      { _id: one._id },
      {
        $set: {
          category_key: one.category_key,
          category_name: one.category_name,
          updated_at: new Date(),
        },
      },
    );
  });

  it('are counted by each request while the feed has a write it has not handed on', async () => {
    // A database and a feed of their own (fixtures written long ago: nothing unhandled), the feed
    // reading once a minute: only its "anything unhandled?" check can tell the kept counts are stale.
    const own = await openTestDatabase('kept_groups');
    await loadFixtures(own.db);
    const slow = await openChangeFeed<Document>(own.db, 'products', {
      intervalMs: 60_000,
      batchSize: 500,
      reconcileMs: 3_600_000,
      lookBackMs: 5_000,
    });
    try {
      const totals = createTotalCache();
      slow.subscribe(totals.invalidate);
      const repository = createProductRepository(own.db, { feed: slow, totals });
      const stored = own.db.collection('products');
      const one = (await stored.findOne({}, { sort: { _id: 1 } }))!;
      const before = countOf(await repository.countByCategory(), one.category_key);
      expect(countOf(await repository.countByCategory(), one.category_key)).toBe(before);
      await stored.updateOne(
        { _id: one._id },
        { $set: { category_key: 'elsewhere', category_name: 'Elsewhere', updated_at: new Date() } },
      );
      expect(countOf(await repository.countByCategory(), one.category_key)).toBe(before - 1);
    } finally {
      await slow.close();
      await own.close();
    }
  });
});
