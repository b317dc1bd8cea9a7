import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { SEARCH_GRAMS_VERSION, searchableTextOf } from '../../src/db/catalog/search-grams';
import type { ProductDoc } from '../../src/db/documents';
import { productFilter } from '../../src/db/catalog/product-plans';
import {
  countUnindexed,
  createSearchPlanner,
  SEARCH_INDEX_COMMAND,
} from '../../src/db/catalog/product-search';
import { syncSearchProjection } from '../../src/db/derived/search-backfill';
import { dropProjection } from '../../src/db/derived/search-projection';
import {
  projectionComplete,
  SEARCH_PROJECTION_COLLECTION,
} from '../../src/db/catalog/search-projection-mark';
import { dropStates, SEARCH_STATE_COLLECTION, statesComplete } from '../../src/db/derived/search-state';
import { FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { capturedLog } from '../support/captured-log';
import { POLLING_FEED, startTestServer, type TestServer } from '../support/server';

/**
 * Polling: products written by another system where the change feed does not see them (older
 * than its position) get rows in the search projection once the feed's count of the collection
 * moves (a sync); a projection never completed makes searches scan, counted at start and in
 * /metrics; `npm run search:index` writes the rows, removes those of products gone, and repairs
 * rows left behind by edits the feed did not see. Nothing is ever written into `products`.
 */

const WORD = 'zephyrine';
let server: TestServer;

/** As another system writes them: no search_grams, odd shapes, or grams of an older version. */
function foreignProducts(): Record<string, unknown>[] {
  const base = FIXTURE_PRODUCTS[0]!;
  const copy = (id: number, changes: Record<string, unknown>) => ({
    ...base,
    _id: id,
    id,
    variant: { ...base.variant, id: 80_000_000 + id },
    ...changes,
  });
  return [
    copy(9001, { name: 'Zephyrine Widget' }),
    copy(9002, { tags: ['ZEPHYRINE'] }),
    copy(9003, { category_name: 'Zephyrine Things', short_description: 'Kept as an array' }),
    copy(9004, {
      brand_name: 'zephyrine co',
      search_grams: [],
      search_grams_version: SEARCH_GRAMS_VERSION - 1,
    }),
    copy(9005, {
      name: 'Unrelated Widget',
      search_grams: ['zep'],
      search_grams_version: SEARCH_GRAMS_VERSION + 1,
    }),
  ];
}

async function restIds(term: string): Promise<{ ids: number[]; total: number }> {
  const response = await server.request(`/api/v1/products?search=${encodeURIComponent(term)}&per_page=100`);
  const body = (await response.json()) as { data: { id: number }[]; meta: { total: number } };
  expect(response.status, JSON.stringify(body).slice(0, 300)).toBe(200);
  return { ids: body.data.map((product) => product.id), total: body.meta.total };
}

async function graphqlIds(term: string): Promise<{ ids: number[]; total: number }> {
  const reply = await server.graphql(
    'query ($term: String!) { searchProducts(term: $term, first: 100) { totalCount edges { node { databaseId } } } }',
    { term },
  );
  const connection = reply.body.data!.searchProducts as {
    totalCount: number;
    edges: { node: { databaseId: number } }[];
  };
  return { ids: connection.edges.map((edge) => edge.node.databaseId), total: connection.totalCount };
}

async function scanIds(term: string): Promise<{ ids: number[]; total: number }> {
  const rows = await server.testDb.db
    .collection<ProductDoc>('products')
    .find(productFilter(criteriaFor(term, undefined)), { projection: { _id: 1 } })
    .sort({ _id: 1 })
    .toArray();
  return { ids: rows.map((row) => row._id as number), total: rows.length };
}

async function gauge(): Promise<number> {
  const text = await (await server.request('/metrics')).text();
  return Number(/^products_without_search_grams (\d+)$/m.exec(text)?.[1]);
}

beforeAll(async () => {
  // Polling: with the log the feed gives every written product its grams (test/ops/log-feed.test.ts).
  server = await startTestServer({
    env: { ...POLLING_FEED, METRICS: 'on', CHANGE_FEED_RECONCILE_MS: '1000' },
  });
  await server.testDb.db.collection('products').insertMany(foreignProducts() as never[]);
});
afterAll(() => server.stop());

describe('searchableTextOf', () => {
  it('takes the strings a regex would match from any shape another system wrote', () => {
    expect(
      searchableTextOf({
        name: ['Zephyrine', 'as an array', 3],
        short_description: 17,
        tags: ['a', 42, null],
      }),
    ).toEqual({
      name: 'Zephyrine as an array',
      short_description: '',
      brand_name: '',
      category_name: '',
      tags: ['a'],
    });
  });
});

describe('products without rows in the search projection', () => {
  it('are found on both APIs, exactly as the scan finds them, once the feed counted the collection', async () => {
    // Written before the feed's position: polling sees them only when its count moves (a sync).
    const deadline = Date.now() + 15_000;
    while (JSON.stringify(await restIds(WORD)) !== JSON.stringify(await scanIds(WORD))) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const rows = server.testDb.db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION);
    expect((await createSearchPlanner(rows)([WORD])).kind).toBe('grams');
    for (const term of [WORD, 'widget', 'zephyrine widget', 'array']) {
      const expected = await scanIds(term);
      expect(expected.total, term).toBeGreaterThan(0);
      expect(await restIds(term), term).toEqual(expected);
      expect(await graphqlIds(term), term).toEqual(expected);
    }
    expect((await scanIds(WORD)).ids).toEqual([9001, 9002, 9003, 9004]);
    // Their own search_grams fields (written by older gateways, or copied) are never read.
    expect((await restIds('zep')).ids).not.toContain(9005);
  });

  it('make every search scan until a first sync completed, counted in /metrics and in a warning at start', async () => {
    const db = server.testDb.db;
    await dropProjection(db);
    // Each server reuses its probes' answer for a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const total = await db.collection('products').countDocuments();
    const rows = db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION);
    expect(await createSearchPlanner(rows, {}, () => projectionComplete(db))([WORD])).toEqual({
      kind: 'scan',
    });
    expect(await restIds(WORD)).toEqual(await scanIds(WORD));
    expect(await gauge()).toBe(total);
    const { logger, lines } = capturedLog();
    const second = await startTestServer({ database: server.testDb, logger, env: POLLING_FEED });
    await second.stop();
    const warning = lines.find(
      (line) => line.level === 40 && String(line.msg).includes(SEARCH_INDEX_COMMAND),
    );
    expect(warning, JSON.stringify(lines.slice(0, 5))).toMatchObject({ products: total });
  });

  it('are written by the sync batch by batch, rows of products gone are removed, and searches use the index', async () => {
    const db = server.testDb.db;
    await db
      .collection(SEARCH_PROJECTION_COLLECTION)
      .insertOne({ _id: 777_777, name: 'Zephyrine ghost' } as never);
    const total = await db.collection('products').countDocuments();
    const seen: number[] = [];
    const result = await syncSearchProjection(db, {
      batchSize: 2,
      onProgress: (progress) => seen.push(progress.checked),
    });
    expect(result).toEqual({ checked: total, written: total, total, removed: 1 });
    expect(seen.slice(0, 3)).toEqual([0, 2, 4]);
    expect(await countUnindexed(db)).toBe(0);
    expect(await gauge()).toBe(0);
    expect((await syncSearchProjection(db)).written).toBe(0);
    const rows = db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION);
    expect((await createSearchPlanner(rows, {}, () => projectionComplete(db))([WORD])).kind).toBe('grams');
    for (const term of [WORD, 'widget', 'zephyrine widget', 'array', 'ghost']) {
      const expected = await scanIds(term);
      expect(await restIds(term), term).toEqual(expected);
      expect(await graphqlIds(term), term).toEqual(expected);
    }
  });

  it('npm run search:index repairs grams left behind by an edit the feed could not see', async () => {
    // Renamed without touching updated_at: invisible to the feed, its grams are of the old name.
    await server.testDb.db
      .collection<ProductDoc>('products')
      .updateOne({ id: 9005 }, { $set: { name: 'Quillwort Widget' } });
    expect((await scanIds('quillwort')).ids).toEqual([9005]);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/search-index.ts', '--batch-size', '3'],
      { env: { ...process.env, MONGODB_URI: server.testDb.uri, MONGODB_DB: server.testDb.dbName } },
    );
    const total = await server.testDb.db.collection('products').countDocuments();
    expect(stdout).toContain(`Search grams written for 1 of ${total} products`);
    expect(await restIds('quillwort')).toEqual({ ids: [9005], total: 1 });
    expect(await graphqlIds('quillwort')).toEqual({ ids: [9005], total: 1 });
  });

  it('npm run search:index writes the before-images once, where none are complete', async () => {
    const db = server.testDb.db;
    await dropStates(db);
    const run = () =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/search-index.ts'], {
        env: { ...process.env, MONGODB_URI: server.testDb.uri, MONGODB_DB: server.testDb.dbName },
      });
    expect((await run()).stdout).toContain('Before-images written');
    expect(await statesComplete(db)).toBe(true);
    const products = await db
      .collection('products')
      .find({}, { projection: { _id: 1 } })
      .toArray();
    const states = await db
      .collection(SEARCH_STATE_COLLECTION)
      .find({}, { projection: { _id: 1 } })
      .toArray();
    expect(states.map((row) => row._id).sort()).toEqual(products.map((row) => row._id).sort());
    expect((await run()).stdout).not.toContain('Before-images written');
  });
});
