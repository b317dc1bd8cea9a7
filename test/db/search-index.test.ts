import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { SEARCH_GRAMS_VERSION } from '../../src/db/search-grams';
import type { ProductDoc } from '../../src/db/documents';
import { productFilter } from '../../src/db/product-plans';
import { countUnindexed, createSearchPlanner, SEARCH_INDEX_COMMAND } from '../../src/db/product-search';
import { backfillSearchGrams } from '../../src/db/search-backfill';
import { searchableTextOf } from '../../src/db/search-grams-writer';
import { dropStates, SEARCH_STATE_COLLECTION, statesComplete } from '../../src/db/search-state';
import { FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { capturedLog } from '../support/captured-log';
import { POLLING_FEED, startTestServer, type TestServer } from '../support/server';

/**
 * Products written by another system where the change feed does not see them (older than its
 * position), without grams or with grams of older rules, are still found (the server falls back
 * to the scan while any exist), counted at start and in /metrics, and `npm run search:index`
 * gives them grams; it also repairs grams left behind by edits the feed did not see.
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
  server = await startTestServer({ env: { ...POLLING_FEED, METRICS: 'on' } });
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

describe('products without current grams', () => {
  it('are still found on both APIs, exactly as the scan finds them', async () => {
    const products = server.testDb.db.collection<ProductDoc>('products');
    expect(await createSearchPlanner(products)([WORD])).toEqual({ kind: 'scan' });
    for (const term of [WORD, 'widget', 'zephyrine widget']) {
      const expected = await scanIds(term);
      expect(expected.total, term).toBeGreaterThan(0);
      expect(await restIds(term), term).toEqual(expected);
      expect(await graphqlIds(term), term).toEqual(expected);
    }
    expect((await scanIds(WORD)).ids).toEqual([9001, 9002, 9003, 9004]);
  });

  it('are counted in /metrics and in a warning at start that names the command', async () => {
    expect(await gauge()).toBe(5);
    const { logger, lines } = capturedLog();
    const second = await startTestServer({ database: server.testDb, logger, env: POLLING_FEED });
    await second.stop();
    const warning = lines.find(
      (line) => line.level === 40 && String(line.msg).includes(SEARCH_INDEX_COMMAND),
    );
    expect(warning, JSON.stringify(lines.slice(0, 5))).toMatchObject({ products: 5 });
  });

  it('get grams from the backfill, batch by batch, and are then found through the index', async () => {
    const db = server.testDb.db;
    const total = await db.collection('products').countDocuments();
    const seen: number[] = [];
    const result = await backfillSearchGrams(db, {
      batchSize: 2,
      onProgress: (progress) => seen.push(progress.checked),
    });
    expect(result).toEqual({ checked: total, written: 5, total });
    expect(seen[seen.length - 1]).toBe(total);
    expect(seen.slice(0, 3)).toEqual([0, 2, 4]);
    expect(await countUnindexed(db.collection('products'))).toBe(0);
    expect(await gauge()).toBe(0);
    expect((await backfillSearchGrams(db)).written).toBe(0);
    const products = db.collection<ProductDoc>('products');
    expect((await createSearchPlanner(products)([WORD])).kind).toBe('grams');
    for (const term of [WORD, 'widget', 'zephyrine widget', 'array']) {
      const expected = await scanIds(term);
      expect(await restIds(term), term).toEqual(expected);
      expect(await graphqlIds(term), term).toEqual(expected);
    }
    expect((await restIds(WORD)).ids).toEqual([9001, 9002, 9003, 9004]);
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
    expect(stdout).toContain(`Search grams written on 1 of ${total} products`);
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
