import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { readProduct } from '../../src/db/document-reading';
import { productFilter } from '../../src/db/catalog/product-plans';
import { openOutsideWriter, productLike, type OutsideWriter } from '../support/outside-writer';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 36, row 9: other writers' products the gateway cannot read (name missing, a price amount
 * that is an object) were counted by totals and left out of pages — a category total of 4 with 3
 * items, a search total of 1 with none. Now a total counts exactly what a page serves: a tag kept
 * as one string is served as a list of one (a default), and the unreadable ones are left out of
 * totals, `totalCount` and `categories` as they are of pages. The answer is an independent scan:
 * the filter's `$match`, each document then read by the gateway's own reader.
 */

let server: TestServer;
let writer: OutsideWriter;
const tag = () => Math.random().toString(36).slice(2, 9).replace(/\d/g, 'q');
const category = `odd${tag()}`;
const noName = `nameless${tag()}`;
const oneTag = `single${tag()}`;

/** What a page can serve of the filter's matches, by the independent scan. */
async function servable(search: string | undefined, cat: string | undefined): Promise<number[]> {
  const rows = await writer.products.find(productFilter(criteriaFor(search, cat)) as Document).toArray();
  return rows
    .flatMap((row) => {
      try {
        return [readProduct(row).id];
      } catch {
        return [];
      }
    })
    .sort((a, b) => a - b);
}

async function rest(path: string) {
  const response = await server.request(path);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { data: { id: number; tags: string[] }[]; meta: { total: number } };
  return { ids: body.data.map((product) => product.id).sort((a, b) => a - b), total: body.meta.total, body };
}

async function graphql(args: string) {
  const reply = await server.graphql(
    `{ products(${args}, first: 50) { totalCount edges { node { databaseId } } } categories { name productCount } }`,
  );
  const data = reply.body.data as {
    products: { totalCount: number; edges: { node: { databaseId: number } }[] };
    categories: { name: string; productCount: number }[];
  };
  return {
    ids: data.products.edges.map((edge) => edge.node.databaseId).sort((a, b) => a - b),
    total: data.products.totalCount,
    categories: data.categories,
  };
}

beforeAll(async () => {
  server = await startTestServer();
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
  const template = (await writer.products.findOne({ _id: { $type: 'number' } } as Document))!;
  const product = (id: number, changes: Document) => productLike(template, id, category, changes);
  const base = 800_000 + Math.floor(Math.random() * 90_000);
  const withoutName: Document = product(base + 3, { short_description: `made by ${noName}` });
  delete withoutName.name;
  await writer.products.insertMany([
    product(base, {}),
    product(base + 1, {}),
    product(base + 2, {}),
    withoutName,
    product(base + 4, { tags: oneTag }),
    product(base + 5, {
      variant: {
        ...(template.variant as Document),
        id: base + 5,
        price: { amount: { cents: 1250 }, currency: 'USD' },
      },
    }),
  ] as Document[]);
});

afterAll(async () => {
  await writer?.close();
  await server?.stop();
});

describe('a total counts what a page serves', () => {
  it("a category with other writers' odd shapes: REST, GraphQL and categories agree with the page", async () => {
    const expected = await servable(undefined, category);
    expect(expected).toHaveLength(4);
    const page = await rest(`/api/v1/products?category=${category}&per_page=50`);
    expect({ ids: page.ids, total: page.total }).toEqual({ ids: expected, total: 4 });
    const connection = await graphql(`category: "${category}"`);
    expect({ ids: connection.ids, total: connection.total }).toEqual({ ids: expected, total: 4 });
    expect(connection.categories.find((group) => group.name === category)?.productCount).toBe(4);
  });

  it("a search for an unreadable product's word: total 0 and no item, on both APIs", async () => {
    expect(await servable(noName, undefined)).toEqual([]);
    const page = await rest(`/api/v1/products/search?term=${noName}`);
    expect({ ids: page.ids, total: page.total }).toEqual({ ids: [], total: 0 });
    const connection = await graphql(`search: "${noName}"`);
    expect({ ids: connection.ids, total: connection.total }).toEqual({ ids: [], total: 0 });
  });

  it('a tag kept as one string is served as a list of one, and found by search', async () => {
    const expected = await servable(oneTag, undefined);
    expect(expected).toHaveLength(1);
    const page = await rest(`/api/v1/products/search?term=${oneTag}`);
    expect({ ids: page.ids, total: page.total }).toEqual({ ids: expected, total: 1 });
    expect(page.body.data[0]!.tags).toEqual([oneTag]);
    const connection = await graphql(`search: "${oneTag}"`);
    expect({ ids: connection.ids, total: connection.total }).toEqual({ ids: expected, total: 1 });
  });
});
