import type { CommandStartedEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBackgroundCommand } from '../support/background-commands';
import { openOutsideWriter, productLike, type OutsideWriter } from '../support/outside-writer';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 36, row 11: a category no product has cost a walk of the whole primary key per page (the
 * page reads in `_id` order, testing each product), so 20 clients asking random unknown categories
 * held the database at 165 % of a core at 100,000 products. Now such a page is answered by one
 * index lookup on `category_key` (src/db/catalog/category-probe.ts): no page read reaches the products.
 * Answers are compared with an independent `$match` on `category_key`.
 */

let server: TestServer;
let writer: OutsideWriter;
let commands: Document[] = [];

beforeAll(async () => {
  server = await startTestServer();
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
  server.database.client.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.databaseName !== server.testDb.dbName) return;
    if (['find', 'aggregate', 'count'].includes(event.commandName) && !isBackgroundCommand(event.command))
      commands.push(event.command);
  });
});
afterAll(async () => {
  await writer?.close();
  await server?.stop();
});

/** The product reads a request sent (its total's included), the feed's own reads left out. */
async function readsOf(request: () => Promise<unknown>): Promise<Document[]> {
  commands = [];
  await request();
  const seen = commands.filter((command) => command.comment === undefined);
  commands = [];
  return seen;
}

async function restCategory(category: string) {
  const response = await server.request(
    `/api/v1/products?category=${encodeURIComponent(category)}&per_page=50`,
  );
  expect(response.status).toBe(200);
  const body = (await response.json()) as { data: { id: number }[]; meta: { total: number } };
  return { ids: body.data.map((product) => product.id), total: body.meta.total };
}

async function graphqlCategory(category: string) {
  const reply = await server.graphql(
    `query ($category: String) { products(category: $category, first: 50) { totalCount edges { node { databaseId } } } }`,
    { category },
  );
  const connection = (
    reply.body.data as { products: { totalCount: number; edges: { node: { databaseId: number } }[] } }
  ).products;
  return { ids: connection.edges.map((edge) => edge.node.databaseId), total: connection.totalCount };
}

const scan = async (key: string) =>
  (await writer.products.find({ category_key: key } as Document).toArray()).map((doc) => doc.id as number);

describe('a category no product has', () => {
  it('answers an empty page and total 0 on both APIs, reading no page of products', async () => {
    for (const ask of [restCategory, graphqlCategory]) {
      const category = `nosuch${Math.random().toString(36).slice(2, 9)}`;
      let answer: { ids: number[]; total: number } | undefined;
      const reads = await readsOf(async () => (answer = await ask(category)));
      expect(answer).toEqual({ ids: [], total: 0 });
      expect(await scan(category)).toEqual([]);
      // Lookups of the key (the page's and the total's), nothing fetched but `_id`; no page read (an
      // aggregate or a sorted find) and no count kept for a random key.
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.length).toBeLessThanOrEqual(2);
      for (const read of reads) {
        expect(read).toMatchObject({ find: 'products', filter: { category_key: category }, limit: 1 });
        expect(read.projection).toEqual({ _id: 1 });
      }
    }
  });

  it('serves a category as soon as an outside writer files a product under it', async () => {
    const category = `newcat${Math.random().toString(36).slice(2, 9)}`;
    expect(await restCategory(category)).toEqual({ ids: [], total: 0 });
    const template = (await writer.products.findOne({ _id: { $type: 'number' } } as Document))!;
    const id = 900_000 + Math.floor(Math.random() * 90_000);
    await writer.products.insertOne(productLike(template, id, category));
    expect(await scan(category)).toEqual([id]);
    expect(await restCategory(category)).toEqual({ ids: [id], total: 1 });
    expect(await graphqlCategory(category)).toEqual({ ids: [id], total: 1 });
    await writer.products.deleteOne({ _id: id } as Document);
    expect(await restCategory(category)).toEqual({ ids: [], total: 0 });
  });

  it('a known category pages as before, the same as the scan', async () => {
    const expected = (await scan('gift cards')).sort((a, b) => a - b);
    expect(expected.length).toBeGreaterThan(0);
    expect(await restCategory('Gift Cards')).toEqual({ ids: expected, total: expected.length });
    expect(await graphqlCategory('gift cards')).toEqual({ ids: expected, total: expected.length });
  });
});
