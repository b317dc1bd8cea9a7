import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { productFilter } from '../../src/db/catalog/product-plans';
import { openOutsideWriter, type OutsideWriter } from '../support/outside-writer';
import { POLLING_FEED, startTestServer, type TestServer } from '../support/server';

/**
 * Issue 36, row 10: a product renamed without touching `updated_at`, then repaired with
 * `npm run search:index`: REST served it at once, while GraphQL `searchProducts` served it with
 * `totalCount: 0` (a total kept from the old grams) until an unrelated write. The log follows the
 * rename itself; polling does not, and `search:index` writes grams outside the feed, so it moves a
 * mark that running servers read before they trust a kept total (src/db/derived/grams-epoch.ts). After
 * each path, every answer is the independent `$regex` scan's, on both APIs.
 */

const letters = () =>
  Array.from({ length: 7 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');

describe.each([
  ['the log (default)', {}],
  ['polling', POLLING_FEED],
])('a rename without a stamp, repaired, on %s', (_, env) => {
  let server: TestServer;
  let writer: OutsideWriter;

  beforeAll(async () => {
    server = await startTestServer({ env });
    writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
  });
  afterAll(async () => {
    await writer?.close();
    await server?.stop();
  });

  const scanIds = async (term: string) =>
    (await writer.products.find(productFilter(criteriaFor(term, undefined)) as Document).toArray())
      .map((doc) => doc.id as number)
      .sort((a, b) => a - b);

  async function rest(term: string) {
    const response = await server.request(`/api/v1/products/search?term=${term}&per_page=100`);
    const body = (await response.json()) as { data: { id: number }[]; meta: { total: number } };
    return { ids: body.data.map((product) => product.id).sort((a, b) => a - b), total: body.meta.total };
  }

  async function graphql(term: string) {
    const reply = await server.graphql(
      'query ($term: String!) { searchProducts(term: $term, first: 100) { totalCount edges { node { databaseId } } } }',
      { term },
    );
    const connection = (
      reply.body.data as {
        searchProducts: { totalCount: number; edges: { node: { databaseId: number } }[] };
      }
    ).searchProducts;
    return {
      ids: connection.edges.map((edge) => edge.node.databaseId).sort((a, b) => a - b),
      total: connection.totalCount,
    };
  }

  /** Both APIs serve what the scan finds, and count what they serve. */
  async function expectAsScanned(term: string): Promise<void> {
    const ids = await scanIds(term);
    expect(await rest(term)).toEqual({ ids, total: ids.length });
    expect(await graphql(term)).toEqual({ ids, total: ids.length });
  }

  it('leaves no total that disagrees with what is served, after the feed and after search:index', async () => {
    const word = `rpr${letters()}`;
    // Counted and kept: the total of a word nobody has.
    await expectAsScanned(word);
    await expectAsScanned(word);
    const product = (await writer.products.findOne({ _id: { $type: 'number' } } as Document))!;
    await writer.products.updateOne({ _id: product._id } as Document, { $set: { name: `${word} Widget` } });
    // The log has followed the rename by now; polling has not (README: writes it cannot see).
    if (!('CHANGE_FEED_POSTGRES_URL' in env)) await expectAsScanned(word);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/search-index.ts'],
      { env: { ...process.env, MONGODB_URI: server.testDb.uri, MONGODB_DB: server.testDb.dbName } },
    );
    expect(stdout).toMatch(/Search grams written for \d+ of/);
    expect(await scanIds(word)).toEqual([product.id]);
    await expectAsScanned(word);
    // And a second repair that writes nothing leaves them so.
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/search-index.ts'], {
      env: { ...process.env, MONGODB_URI: server.testDb.uri, MONGODB_DB: server.testDb.dbName },
    });
    await expectAsScanned(word);
  });
});
