import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { countFilter, SCAN } from '../../src/db/catalog/product-plans';
import { openOutsideWriter, productLike, type OutsideWriter } from '../support/outside-writer';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 35: from the log, a change moves the kept totals by its document before and after, and
 * purges only the cached answers it can alter. Over real HTTP, against the server reading the
 * embedded engine's log, with another application's plain-driver writes (no `updated_at`): every
 * total right after a write equals an independent count of the database, on both APIs; a cached
 * page of a filter the change did not touch stays a HIT; and no total is counted again because
 * of a write (kept_totals_counted_total).
 */

let server: TestServer;
let writer: OutsideWriter;
let template: Document;
let nextId = 900_000;
const word = () => `mvt${Math.random().toString(36).slice(2, 9)}`;

beforeAll(async () => {
  server = await startTestServer({ env: { RESPONSE_CACHE_TTL_MS: '600000' } });
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
  template = (await writer.products.findOne({ category_key: 'gift cards' }))!;
});

afterAll(async () => {
  await writer?.close();
  await server?.close();
});

/** The database's own count of what a total counts (the filter's regexes, no grams). */
async function scanned(term: string, category?: string): Promise<number> {
  return writer.products.countDocuments(countFilter(criteriaFor(term, category), SCAN) as Document);
}

async function restTotal(path: string): Promise<{ total: number; cache: string | null }> {
  const response = await server.request(path);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { meta: { total: number } };
  return { total: body.meta.total, cache: response.headers.get('x-cache') };
}

async function graphqlTotal(term: string): Promise<number> {
  const reply = await server.graphql(
    'query ($t: String!) { searchProducts(term: $t, first: 1) { totalCount } }',
    {
      t: term,
    },
  );
  return (reply.body.data as { searchProducts: { totalCount: number } }).searchProducts.totalCount;
}

async function categoryCounts(): Promise<Map<string, number>> {
  const reply = await server.graphql('{ categories { name productCount } }');
  const rows = (reply.body.data as { categories: { name: string; productCount: number }[] }).categories;
  return new Map(rows.map((row) => [row.name, row.productCount]));
}

async function countedTotals(): Promise<Record<string, number>> {
  const text = await (await server.request('/metrics')).text();
  const counted: Record<string, number> = {};
  for (const [, reason, value] of text.matchAll(/^kept_totals_counted_total\{reason="(\w+)"\} (\d+)$/gm))
    counted[reason!] = Number(value);
  return counted;
}

/** Inserts `names` as another application would, filed under Gift Cards; answers their `_id`s. */
async function insert(names: string[]): Promise<number[]> {
  const ids = names.map(() => nextId++);
  await writer.products.insertMany(
    ids.map((id, i) =>
      productLike(template, id, 'gift cards', { category_name: 'Gift Cards', name: names[i] }),
    ),
  );
  return ids;
}

/** Totals of every term on both APIs, each equal to the database's count; returns them. */
async function expectTotals(terms: string[]): Promise<number[]> {
  const totals = [];
  for (const term of terms) {
    const total = await scanned(term);
    expect((await restTotal(`/api/v1/products/search?term=${term}&per_page=1`)).total).toBe(total);
    expect(await graphqlTotal(term)).toBe(total);
    totals.push(total);
  }
  return totals;
}

/** Lets every kept total's count settle (it moves once the feed has handed on what it may have seen). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('a change from the log', () => {
  it('moves exactly the totals it should, and counts none again', async () => {
    const [from, to, other] = [word(), word(), word()];
    const [renamed] = await insert([`${from} one`, `${from} two`, `${from} ${other}`, `${other} four`]);
    expect(await expectTotals([from, to, other])).toEqual([3, 0, 2]);
    await settle();
    const before = await countedTotals();
    await writer.products.updateOne({ _id: renamed } as Document, { $set: { name: `${to} one` } });
    expect(await expectTotals([from, to, other])).toEqual([2, 1, 2]);
    await writer.products.deleteOne({ _id: renamed } as Document);
    expect(await expectTotals([from, to, other])).toEqual([2, 0, 2]);
    await insert([`${to} five`]);
    expect(await expectTotals([from, to, other])).toEqual([2, 1, 2]);
    expect(await countedTotals()).toEqual(before);
  });

  it('moves both categories of a category move, and the category totals on /api/v1', async () => {
    const [moved] = await insert([`${word()} mover`]);
    const category = (name: string) =>
      restTotal(`/api/v1/products?category=${encodeURIComponent(name)}&per_page=1`);
    const counts = await categoryCounts();
    const gift = (await category('Gift Cards')).total;
    expect(gift).toBe(await scanned('', 'Gift Cards'));
    expect(counts.get('Gift Cards')).toBe(gift);
    const software = (await category('Software')).total;
    await settle();
    const before = await countedTotals();
    await writer.products.updateOne({ _id: moved } as Document, {
      $set: { category_name: 'Software', category_key: 'software' },
    });
    const after = await categoryCounts();
    expect([after.get('Gift Cards'), after.get('Software')]).toEqual([gift - 1, software + 1]);
    expect((await category('Gift Cards')).total).toBe(await scanned('', 'Gift Cards'));
    expect((await category('Software')).total).toBe(await scanned('', 'Software'));
    expect((await category('Software')).total).toBe(software + 1);
    expect(await countedTotals()).toEqual(before);
  });

  it('purges the cached pages of the filters it moves a product in or out of, and keeps the others', async () => {
    const [from, to, other] = [word(), word(), word()];
    const [renamed] = await insert([`${from} one`, `${from} two`, `${other} three`]);
    const search = (term: string) => restTotal(`/api/v1/products/search?term=${term}&per_page=1&page=2`);
    const graphql = async (term: string) => {
      const query = encodeURIComponent(`{ searchProducts(term: "${term}", first: 1) { totalCount } }`);
      const response = await server.request(`/graphql?query=${query}`, {
        headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
      });
      await response.arrayBuffer();
      return response.headers.get('x-cache');
    };
    for (const term of [from, to, other]) {
      await search(term);
      await graphql(term);
    }
    for (const term of [from, to, other]) {
      expect((await search(term)).cache).toBe('HIT');
      expect(await graphql(term)).toBe('HIT');
    }
    await writer.products.updateOne({ _id: renamed } as Document, { $set: { name: `${to} one` } });
    expect(await search(from)).toEqual({ total: 1, cache: 'MISS' });
    expect(await search(to)).toEqual({ total: 1, cache: 'MISS' });
    expect(await search(other)).toEqual({ total: 1, cache: 'HIT' });
    expect([await graphql(from), await graphql(to), await graphql(other)]).toEqual(['MISS', 'MISS', 'HIT']);
  });
});
