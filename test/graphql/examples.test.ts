import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHIQL_DEFAULT_QUERY } from '../../src/graphiql';
import { FIXTURE_CUSTOMERS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { dataOf } from './helpers';

/** The documents users meet first, GraphiQL's default and the README's examples, run as they are. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

/** `# Authorization: Bearer $(npm run --silent token -- --sub X [--scope Y])` → a token like it. */
async function headersFor(document: string): Promise<Record<string, string>> {
  const match = /--sub (\S+?)(?: --scope (\S+?))?\)/.exec(document);
  if (!match) return {};
  return bearer(await mintToken({ sub: match[1]!, ...(match[2] ? { scope: match[2] } : {}) }));
}

async function run(document: string, operationName?: string, headers: Record<string, string> = {}) {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: document, operationName }),
  });
  return dataOf({ status: response.status, body: (await response.json()) as never });
}

describe('GraphiQL default document', () => {
  it('runs as it opens (one operation, no name to pick), and its commented orders query runs with a token', async () => {
    const products = await run(GRAPHIQL_DEFAULT_QUERY);
    expect((products.products as { edges: unknown[] }).edges).toHaveLength(5);
    const commentedQuery = GRAPHIQL_DEFAULT_QUERY.split('and this query:')[1]!
      .split('\n')
      .filter((line) => line.trim().startsWith('#'))
      .map((line) => line.replace(/^\s*#/, ''))
      .join('\n');
    const alice = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
    const mine = (await run(commentedQuery, undefined, alice)) as {
      viewer: { orders: { edges: { node: { orderNumber: string } }[] } };
    };
    expect(mine.viewer.orders.edges).toHaveLength(5);
    for (const { node } of mine.viewer.orders.edges) expect(node.orderNumber).toMatch(/\S/);
  });
});

describe('documents with several operations', () => {
  it('run the operation asked for, each time (the compiled-query cache is per document)', async () => {
    const document = 'query A { categories { name } } query B { brands { id } }';
    for (let round = 0; round < 2; round += 1) {
      expect(Object.keys(await run(document, 'A'))).toEqual(['categories']);
      expect(Object.keys(await run(document, 'B'))).toEqual(['brands']);
    }
  });
});

describe('README GraphQL examples', () => {
  it('run without errors and return data', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const documents = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(documents.length).toBeGreaterThanOrEqual(2);
    for (const document of documents) {
      const data = await run(document, undefined, await headersFor(document));
      expect(JSON.stringify(data)).not.toContain('null');
      expect(JSON.stringify(data).length).toBeGreaterThan(50);
    }
  });
});
