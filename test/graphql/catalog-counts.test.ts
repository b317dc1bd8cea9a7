import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProductDoc } from '../../src/db/documents';
import { productRecord } from '../../src/db/records';
import { FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { startTestServer, type TestServer } from '../support/server';
import { call, withQuery } from '../rest/helpers';
import { dataOf } from './helpers';

/** `categories` and `brands`: counts from the fixtures, and each category's count as /api/v1 reports it. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const QUERY = '{ categories { name productCount } brands { id name productCount } }';

interface Counts {
  categories: { name: string; productCount: number }[];
  brands: { id: string; name: string; productCount: number }[];
}

function tally<K extends string>(keyOf: (p: (typeof FIXTURE_PRODUCTS)[number]) => K): Map<K, number> {
  const counts = new Map<K, number>();
  for (const product of FIXTURE_PRODUCTS) counts.set(keyOf(product), (counts.get(keyOf(product)) ?? 0) + 1);
  return counts;
}

async function restTotal(category: string): Promise<number> {
  const reply = await call(server, withQuery('/api/v1/products', { category }));
  expect(reply.status).toBe(200);
  return (reply.body.meta as { total: number }).total;
}

describe('categories and brands', () => {
  it('count the fixture products per category and per brand, sorted by name', async () => {
    const { categories, brands } = dataOf<Counts>(await server.graphql(QUERY));
    const expectedCategories = [...tally((p) => p.category_name)]
      .map(([name, productCount]) => ({ name, productCount }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(categories).toEqual(expectedCategories);
    const brandNames = new Map(FIXTURE_PRODUCTS.map((p) => [p.brand_id, p.brand_name]));
    const expectedBrands = [...tally((p) => p.brand_id)]
      .map(([id, productCount]) => ({ id, name: brandNames.get(id)!, productCount }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(brands).toEqual(expectedBrands);
    expect(brands.length).toBeGreaterThan(10);
  });

  it('give each category the total that GET /api/v1/products?category=<name> reports', async () => {
    const { categories } = dataOf<Counts>(await server.graphql(QUERY));
    expect(categories.length).toBe(4);
    for (const { name, productCount } of categories) expect(await restTotal(name), name).toBe(productCount);
  });

  it('merge names that differ only in case into one category, as the REST filter does', async () => {
    const products = server.testDb.db.collection<ProductDoc>('products');
    const template = {
      ...FIXTURE_PRODUCTS[0]!,
      id: 9001,
      category_name: 'GIFT CARDS',
      category_key: 'gift cards',
      // Written now, as a writer does: the change feed (which keeps the counts exact) follows updated_at.
      updated_at: new Date(),
    };
    await products.insertOne(productRecord({ ...template, variant: { ...template.variant, id: 9901 } }));
    try {
      const { categories } = dataOf<Counts>(await server.graphql(QUERY));
      const gift = categories.filter((category) => category.name.toLowerCase() === 'gift cards');
      expect(gift).toEqual([
        { name: 'GIFT CARDS', productCount: tally((p) => p.category_key).get('gift cards')! + 1 },
      ]);
      expect(await restTotal('Gift Cards')).toBe(gift[0]!.productCount);
    } finally {
      await products.deleteOne({ id: 9001 });
    }
  });
});
