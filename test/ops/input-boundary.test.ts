import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/graphql-limits';
import { call, expectValidationError } from '../rest/helpers';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * Input checked once at the boundary, before any parser, key or database sees it (issue 28, rows
 * 1-3): text the database refuses (NUL, unpaired surrogates) is the documented 422 /
 * BAD_USER_INPUT, and nesting too deep to parse or key is a 400, never a 500 or a stack overflow.
 * The response cache is on, so its keys see every request the tests send.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { RESPONSE_CACHE_TTL_MS: '60000' } });
});
afterAll(() => server.stop());

const BAD_TEXT = (field: string) =>
  `The ${field} field must be text without NUL characters or unpaired surrogates.`;

async function postGraphql(body: unknown, headers: Record<string, string> = {}) {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as GraphqlBody | GraphqlBody[] };
}

interface GraphqlBody {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string; errors?: Record<string, string[]> } }[];
}

function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/Unexpected error|INTERNAL_SERVER_ERROR|Maximum call stack|RangeError|\n\s+at /);
}

describe('text the database refuses (row 1)', () => {
  it.each([
    ['/api/v1/products?search=%00', 'search'],
    ['/api/v1/products?search=gift%00card', 'search'],
    ['/api/v1/products?category=%00', 'category'],
    ['/api/v1/products/search?term=ab%00c', 'term'],
  ])('%s is a 422 naming the field', async (path, field) => {
    const reply = await call(server, path);
    expectValidationError(reply, BAD_TEXT(field), { [field]: [BAD_TEXT(field)] });
  });

  it('a NUL in an order ULID is "Order not found."', async () => {
    const token = await mintToken({ sub: 'someone' });
    const reply = await call(server, '/api/v1/orders/01ARZ3NDEKTSV4RRFFQ69G5F%00', {
      headers: bearer(token),
    });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ message: 'Order not found.' });
  });

  it.each([
    ['products(search:)', '{ products(first: 1, search: "\\u0000") { totalCount } }', 'search'],
    ['searchProducts(term:)', '{ searchProducts(first: 1, term: "a\\u0000b") { totalCount } }', 'term'],
    ['productPage(category:)', '{ productPage(category: "\\u0000") { total } }', 'category'],
    ['searchProductPage(term:)', '{ searchProductPage(term: "\\u0000") { total } }', 'term'],
  ])('%s with a NUL is BAD_USER_INPUT', async (_name, query, field) => {
    const reply = await postGraphql({ query });
    expectNoInternals(reply.text);
    const body = reply.body as GraphqlBody;
    expect(body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.extensions?.errors).toEqual({ [field]: [BAD_TEXT(field)] });
  });

  it('an unpaired surrogate in a variable is BAD_USER_INPUT', async () => {
    const reply = await postGraphql(
      '{"query":"query ($s: String) { products(first: 1, search: $s) { totalCount } }","variables":{"s":"ab\\ud800"}}',
    );
    expectNoInternals(reply.text);
    expect((reply.body as GraphqlBody).errors?.[0]?.extensions?.errors).toEqual({
      search: [BAD_TEXT('search')],
    });
  });

  it('a NUL in an order filter is BAD_USER_INPUT', async () => {
    const token = await mintToken({ sub: 'staff', scope: 'orders:read:all' });
    const reply = await postGraphql(
      { query: '{ orders(first: 1, filter: { customerId: "a\\u0000" }) { totalCount } }' },
      bearer(token),
    );
    expectNoInternals(reply.text);
    expect((reply.body as GraphqlBody).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

const nested = (depth: number, leaf: string) => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

describe('nesting too deep to parse or key (rows 2 and 3)', () => {
  it.each(['application/graphql-response+json', 'application/json'])(
    'refuses 3,000 nested list literals in the document with a 400 (Accept: %s)',
    async (accept) => {
      const reply = await postGraphql(
        { query: `{ nodes(ids: ${nested(3_000, '"x"')}) { id } }` },
        { accept },
      );
      expectNoInternals(reply.text);
      expect(reply.status).toBe(400);
      expect((reply.body as GraphqlBody).errors).toEqual([
        {
          message: `The document nests deeper than ${GRAPHQL_LIMITS.maxNesting} levels.`,
          extensions: { code: 'BAD_REQUEST' },
        },
      ]);
    },
  );

  it('refuses the same nesting in object literals and in a batch', async () => {
    const deepObject = `${'{ a: '.repeat(3_000)}1${' }'.repeat(3_000)}`;
    const reply = await postGraphql([
      { query: '{ __typename }' },
      { query: `{ orders(filter: ${deepObject}) { totalCount } }` },
    ]);
    expectNoInternals(reply.text);
    expect(reply.status).toBe(400);
  });

  it('counts no bracket inside a string', async () => {
    const reply = await postGraphql({
      query: `{ products(first: 1, search: "${'['.repeat(150)}") { totalCount } }`,
    });
    expect(reply.text).not.toMatch(/nests deeper/);
  });

  it('still parses a document nested as deep as the field depth limit allows', async () => {
    const depth = GRAPHQL_LIMITS.maxDepth;
    const reply = await postGraphql({ query: `{ nodes(ids: ${nested(depth, '"x"')}) { id } }` });
    expect(reply.text).not.toMatch(/nest/i);
  });

  const deepArray = nested(5_000, '1');
  it.each([
    ['variables', `{"query":"{ __typename }","variables":{"f":${deepArray}}}`],
    ['extensions', `{"query":"{ __typename }","extensions":{"f":${deepArray}}}`],
    ['operationName', `{"query":"{ __typename }","operationName":${nested(5_000, '"x"')}}`],
  ])('refuses 5,000 nested arrays in %s (sent as JSON text) with a 400', async (_name, body) => {
    const reply = await postGraphql(body);
    expectNoInternals(reply.text);
    expect(reply.status).toBe(400);
    expect((reply.body as GraphqlBody).errors?.[0]).toMatchObject({
      message: expect.stringMatching(/nest/i),
      extensions: { code: 'BAD_REQUEST' },
    });
  });

  it('refuses the same inside a batch with a 400, not "Unexpected error."', async () => {
    const reply = await postGraphql(
      `[{"query":"{ __typename }"},{"query":"{ __typename }","variables":{"f":${deepArray}}}]`,
    );
    expectNoInternals(reply.text);
    expect(reply.status).toBe(400);
  });

  it('refuses deep variables sent with GET too', async () => {
    // `[` and `]` need no escaping in a query string: 10 kB, within node's header limit.
    const response = await server.request(`/graphql?query=%7B__typename%7D&variables={"f":${deepArray}}`, {
      headers: { 'x-graphql-yoga-csrf': '1', accept: 'application/json' },
    });
    const text = await response.text();
    expectNoInternals(text);
    expect(response.status).toBe(400);
  });

  it('still answers variables of an ordinary depth', async () => {
    const reply = await postGraphql({
      query: 'query ($f: OrderFilter) { __typename }',
      variables: { f: { paymentStatus: ['COMPLETED'] } },
    });
    expect(reply.status).toBe(200);
  });
});

describe('cache keys from the validated parameters (row 14)', () => {
  async function page(path: string) {
    const reply = await call(server, path);
    expect(reply.status).toBe(200);
    return { cache: reply.headers.get('x-cache'), text: reply.text };
  }

  it('ignores unknown parameters: 20 cache-busting variations are 20 hits', async () => {
    const first = await page('/api/v1/products?per_page=7');
    const again = await Promise.all(
      Array.from({ length: 20 }, () => page(`/api/v1/products?per_page=7&_=${Math.random()}`)),
    );
    expect(again.map((reply) => reply.cache)).toEqual(Array(20).fill('HIT'));
    for (const reply of again) expect(reply.text).toBe(first.text);
  });

  it.each([
    [
      'reordered',
      '/api/v1/products?search=gift&per_page=2&category=Gift%20Cards',
      '/api/v1/products?category=Gift+Cards&per_page=2&search=gift',
    ],
    ['repeated (the last wins)', '/api/v1/products?per_page=3', '/api/v1/products?per_page=9&per_page=3'],
    ['padded or blank', '/api/v1/products?search=card', '/api/v1/products?search=%20card%20&category=%20'],
    ['with a trailing slash', '/api/v1/products/search?term=gift', '/api/v1/products/search/?term=gift'],
  ])('serves %s parameters from one entry', async (_name, path, variant) => {
    const first = await page(path);
    const second = await page(variant);
    expect(second).toEqual({ cache: 'HIT', text: first.text });
  });

  it('keeps the parameters that change the answer apart', async () => {
    const five = await page('/api/v1/products?per_page=5&search=soundwave');
    const six = await page('/api/v1/products?per_page=6&search=soundwave');
    expect(six.cache).toBe('MISS');
    expect(six.text).not.toBe(five.text);
  });
});
