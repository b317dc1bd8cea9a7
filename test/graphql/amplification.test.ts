import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { PRODUCT_FIELDS, dataOf, globalId, singleError } from './helpers';

/**
 * A small request must not buy a large response: `nodes(ids:)` is capped, list arguments count in
 * the cost estimate (as variables too), and cached results never cross from one viewer to another.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { RESPONSE_CACHE_TTL_MS: '60000' } });
});
afterAll(() => server.stop());

const productIds = (count: number) =>
  Array.from({ length: count }, (_, index) => globalId('Product', FIXTURE_PRODUCTS[index % 20]!.id));

const NODES = `query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`;

describe('nodes(ids:)', () => {
  it('takes 100 IDs', async () => {
    const data = dataOf<{ nodes: unknown[] }>(await server.graphql(NODES, { ids: productIds(100) }));
    expect(data.nodes).toHaveLength(100);
  });

  it('refuses 101 IDs, and 5,500, with BAD_USER_INPUT and no data', async () => {
    for (const count of [101, 5_500]) {
      const reply = await server.graphql(NODES, { ids: productIds(count) });
      const error = singleError(reply, 'BAD_USER_INPUT');
      expect(error.message).toBe('The ids field must not have more than 100 items.');
      expect(reply.body.data).toBeNull();
    }
  });
});

describe('cost of list arguments', () => {
  const aliased = (count: number) =>
    `query ($ids: [ID!]!) { ${Array.from(
      { length: count },
      (_, index) => `n${index}: nodes(ids: $ids) { ...AllProductFields }`,
    ).join(' ')} } ${PRODUCT_FIELDS}`;

  it('multiplies what nodes selects by the number of IDs, given as a variable', async () => {
    expect(dataOf(await server.graphql(aliased(1), { ids: productIds(100) }))).toBeDefined();
    const reply = await server.graphql(aliased(20), { ids: productIds(100) });
    expect(reply.body.data).toBeUndefined();
    expect(reply.body.errors?.[0]?.message).toMatch(/^Query Cost limit of 150000 exceeded, found \d+\.$/);
    // Twenty aliases of two IDs each are cheap.
    expect(dataOf(await server.graphql(aliased(20), { ids: productIds(2) }))).toBeDefined();
  });

  it('multiplies by a literal list, and by a perPage given as a variable', async () => {
    const literal = JSON.stringify(productIds(100));
    const reply = await server.graphql(
      `{ ${Array.from({ length: 5 }, (_, index) => `n${index}: nodes(ids: ${literal}) { ...AllProductFields }`).join(' ')} } ${PRODUCT_FIELDS}`,
    );
    expect(reply.body.errors?.[0]?.message).toMatch(/Cost limit/);
    const pages = `query ($n: Int!) { ${Array.from(
      { length: 20 },
      (_, index) => `p${index}: productPage(perPage: $n) { items { ...AllProductFields } }`,
    ).join(' ')} } ${PRODUCT_FIELDS}`;
    expect((await server.graphql(pages, { n: 100 })).body.errors?.[0]?.message).toMatch(/Cost limit/);
    expect(dataOf(await server.graphql(pages, { n: 1 }))).toBeDefined();
  });
});

describe('cost of what runs, not of what was sent', () => {
  const eight = (argument: string) =>
    Array.from(
      { length: 8 },
      (_, index) => `a${index}: products(${argument}) { edges { node { ...AllProductFields } } }`,
    ).join(' ');
  const refused = (reply: Awaited<ReturnType<TestServer['graphql']>>) => {
    expect(reply.body.data).toBeUndefined();
    expect(reply.body.errors?.[0]?.message).toMatch(/^Query Cost limit of 150000 exceeded, found \d+\.$/);
  };

  it('refuses a size given as a variable default as it refuses the literal', async () => {
    refused(await server.graphql(`{ ${eight('first: 100')} } ${PRODUCT_FIELDS}`));
    // Before: this ran, 800 products and 888 kB.
    refused(await server.graphql(`query ($n: Int = 100) { ${eight('first: $n')} } ${PRODUCT_FIELDS}`));
    const ids = JSON.stringify(productIds(100));
    const nodes = `query ($ids: [ID!] = ${ids}) { ${Array.from(
      { length: 20 },
      (_, index) => `n${index}: nodes(ids: $ids) { ...AllProductFields }`,
    ).join(' ')} } ${PRODUCT_FIELDS}`;
    refused(await server.graphql(nodes));
  });

  it('prices searches and filtered counts as the scans they are', async () => {
    const searches = `{ ${Array.from(
      { length: 20 },
      (_, index) => `s${index}: products(first: 1, search: "card ${index}") { totalCount }`,
    ).join(' ')} }`;
    refused(await server.graphql(searches));
    refused(
      await server.graphql(
        `{ ${Array.from({ length: 20 }, (_, index) => `c${index}: categories { name }`).join(' ')} }`,
      ),
    );
    // One search with its count, as a shop's search page asks, runs.
    expect(
      dataOf(await server.graphql('{ products(first: 20, search: "card") { totalCount } }')),
    ).toBeDefined();
  });
});

describe('the response cache and viewers', () => {
  it("never serves a customer's order node result to anyone else", async () => {
    const bob = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.bob }));
    const query = `query ($id: ID!) { node(id: $id) { id } }`;
    const missing = { id: globalId('Order', 99_999) };
    expect(dataOf(await server.graphql(query, missing, bob))).toEqual({ node: null });
    // Anonymous: the same document and variables, yet a 401-kind answer, not bob's cached null.
    singleError(await server.graphql(query, missing), 'UNAUTHENTICATED');

    const alices = { ids: [globalId('Order', 1), globalId('Product', 1)] };
    const alice = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
    const mixed = `query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`;
    expect(dataOf<{ nodes: unknown[] }>(await server.graphql(mixed, alices, alice)).nodes[0]).not.toBeNull();
    const anonymous = await server.graphql(mixed, alices);
    singleError(anonymous, 'UNAUTHENTICATED');
  });

  it('still shares public product results', async () => {
    const query = `{ productPage(perPage: 3) { items { name } } }`;
    const first = await server.graphql(query);
    const bob = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.bob }));
    expect((await server.graphql(query, undefined, bob)).body).toEqual(first.body);
    const metrics = await (await server.request('/metrics')).text();
    expect(Number(/response_cache_lookups_total\{result="hit"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(
      0,
    );
  });
});
