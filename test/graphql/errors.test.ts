import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURE_CUSTOMERS } from '../../seed/fixtures';
import {
  TEST_JWT_SECRET,
  bearer,
  mintToken,
  startTestServer,
  type GraphQLReply,
  type TestServer,
} from '../support/server';
import { failEveryRead, unexpectedServerError } from '../support/failing-reads';
import { globalId, singleError } from './helpers';

/** Every error code the API raises, with its message and shape, and the masking of everything else. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const ORDER = `query ($ulid: ID!) { order(ulid: $ulid) { databaseId } }`;
const BOBS_ORDER = '01KFBPVG1VM8TD2QXN7C4WKB6S';
const ALICES_ORDER = '01KE78KGFSQ4ZC7N2XW8RTB3MD';
const UNKNOWN_ULID = '01KZZZZZZZZZZZZZZZZZZZZZZZ';

/** An error reply for a nullable root field: data holds null for it, and nothing leaks. */
function expectFieldError(reply: GraphQLReply, field: string, code: string, message?: string) {
  expect(reply.status).toBe(200);
  const error = singleError(reply, code);
  if (message !== undefined) expect(error.message).toBe(message);
  expect(error.path).toEqual([field]);
  expect(JSON.stringify(reply.body)).not.toMatch(/stack|mongo|at .*\.ts/i);
  return error;
}

describe('UNAUTHENTICATED', () => {
  const unauthenticated = (reply: GraphQLReply) => {
    expectFieldError(reply, 'order', 'UNAUTHENTICATED', 'Unauthenticated.');
    expect(reply.body.data).toEqual({ order: null });
  };

  it('answers an order query without a token', async () => {
    unauthenticated(await server.graphql(ORDER, { ulid: ALICES_ORDER }));
  });

  it('checks authentication before existence', async () => {
    unauthenticated(await server.graphql(ORDER, { ulid: UNKNOWN_ULID }));
    unauthenticated(await server.graphql(ORDER, { ulid: 'not-a-ulid' }));
  });

  it.each([
    ['a Basic header', () => Promise.resolve('Basic dXNlcjpwYXNz')],
    ['an empty bearer', () => Promise.resolve('Bearer ')],
    ['a malformed token', () => Promise.resolve('Bearer not.a.jwt')],
    [
      'an expired token',
      async () =>
        `Bearer ${await mintToken({ sub: 'cus_alice', expiresAt: Math.floor(Date.now() / 1000) - 3600 })}`,
    ],
    [
      'a token not yet valid',
      async () =>
        `Bearer ${await mintToken({ sub: 'cus_alice', notBefore: Math.floor(Date.now() / 1000) + 3600 })}`,
    ],
    [
      'a token signed with another secret',
      async () => `Bearer ${await mintToken({ sub: 'cus_alice', secret: 'x'.repeat(40) })}`,
    ],
    ['a token without sub', async () => `Bearer ${await mintToken({})}`],
    [
      'an alg: none token',
      () => {
        const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        return Promise.resolve(`Bearer ${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: 'cus_alice' })}.`);
      },
    ],
    [
      'an HS512 token (algorithm not allowed)',
      async () =>
        `Bearer ${await new SignJWT({})
          .setProtectedHeader({ alg: 'HS512' })
          .setSubject('cus_alice')
          .setExpirationTime('1h')
          .sign(new TextEncoder().encode(TEST_JWT_SECRET))}`,
    ],
  ])('answers an order query with %s', async (_name, header) => {
    unauthenticated(await server.graphql(ORDER, { ulid: ALICES_ORDER }, { authorization: await header() }));
  });
});

describe('FORBIDDEN', () => {
  it("answers another customer's order", async () => {
    const reply = await server.graphql(
      ORDER,
      { ulid: BOBS_ORDER },
      bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice })),
    );
    expectFieldError(reply, 'order', 'FORBIDDEN', 'This action is unauthorized.');
    expect(reply.body.data).toEqual({ order: null });
  });

  it('is not lifted by a lesser scope', async () => {
    const token = await mintToken({ sub: 'support_agent', scope: 'orders:read orders:read:al' });
    expectFieldError(await server.graphql(ORDER, { ulid: BOBS_ORDER }, bearer(token)), 'order', 'FORBIDDEN');
  });

  it('applies to order nodes too', async () => {
    const reply = await server.graphql(
      `query ($id: ID!) { node(id: $id) { id } }`,
      { id: globalId('Order', 3) },
      bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice })),
    );
    expectFieldError(reply, 'node', 'FORBIDDEN');
  });
});

describe('NOT_FOUND', () => {
  it.each([
    [UNKNOWN_ULID],
    ['01kzzzzzzzzzzzzzzzzzzzzzzz'],
    ['not-a-ulid'],
    ['8ZZZZZZZZZZZZZZZZZZZZZZZZZ'],
    ['01KE78KGFSQ4ZC7N2XW8RTB3M'],
    [''],
  ])('answers the unknown or invalid ULID %j', async (ulid) => {
    const reply = await server.graphql(
      ORDER,
      { ulid },
      bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice })),
    );
    expectFieldError(reply, 'order', 'NOT_FOUND', 'Order not found.');
    expect(reply.body.data).toEqual({ order: null });
  });

  it('answers NOT_FOUND, not FORBIDDEN, to the orders:read:all scope for a missing order', async () => {
    const token = await mintToken({ sub: 'support_agent', scope: 'orders:read:all' });
    expectFieldError(
      await server.graphql(ORDER, { ulid: UNKNOWN_ULID }, bearer(token)),
      'order',
      'NOT_FOUND',
    );
  });
});

describe('BAD_USER_INPUT', () => {
  const long = 'a'.repeat(201);
  const cases: [string, string, Record<string, string[]>][] = [
    [
      'productPage(perPage: 101)',
      'productPage',
      { perPage: ['The per page field must not be greater than 100.'] },
    ],
    ['productPage(perPage: 0)', 'productPage', { perPage: ['The per page field must be at least 1.'] }],
    ['productPage(perPage: -3)', 'productPage', { perPage: ['The per page field must be at least 1.'] }],
    ['productPage(page: 0)', 'productPage', { page: ['The page field must be at least 1.'] }],
    [
      `productPage(search: "${long}")`,
      'productPage',
      { search: ['The search field must not be greater than 200 characters.'] },
    ],
    [
      'searchProductPage(term: "gift", perPage: 500)',
      'searchProductPage',
      { perPage: ['The per page field must not be greater than 100.'] },
    ],
    ['searchProductPage(term: "   ")', 'searchProductPage', { term: ['The term field is required.'] }],
    ['searchProductPage(term: "")', 'searchProductPage', { term: ['The term field is required.'] }],
    [
      `searchProductPage(term: "${long}")`,
      'searchProductPage',
      { term: ['The term field must not be greater than 200 characters.'] },
    ],
    [
      `searchProducts(term: "${long}")`,
      'searchProducts',
      { term: ['The term field must not be greater than 200 characters.'] },
    ],
    ['searchProducts(term: " ")', 'searchProducts', { term: ['The term field is required.'] }],
    [
      `products(search: "${long}")`,
      'products',
      { search: ['The search field must not be greater than 200 characters.'] },
    ],
    ['products(first: 101)', 'products', { first: ['The first argument must be between 0 and 100.'] }],
    ['products(last: 101)', 'products', { last: ['The last argument must be between 0 and 100.'] }],
    [
      'searchProducts(term: "gift", first: 101)',
      'searchProducts',
      { first: ['The first argument must be between 0 and 100.'] },
    ],
    ['products(after: "garbage")', 'products', { after: ['The after cursor is not valid.'] }],
    ['node(id: "garbage")', 'node', { id: ['"garbage" is not a valid global ID.'] }],
  ];

  it.each(cases)('answers %s', async (call, field, errors) => {
    const selection = field.endsWith('Page') ? '{ total }' : field === 'node' ? '{ id }' : '{ totalCount }';
    const reply = await server.graphql(`{ ${call} ${selection} }`);
    const error = expectFieldError(reply, field, 'BAD_USER_INPUT');
    expect(error.extensions?.errors).toEqual(errors);
    expect(error.message).toBe(Object.values(errors)[0]?.[0]);
  });

  it('counts characters, not UTF-16 units, against the 200 limit', async () => {
    const emoji = '🎮'.repeat(200);
    const ok = await server.graphql(`query ($t: String!) { searchProductPage(term: $t) { total } }`, {
      t: emoji,
    });
    expect(ok.body.errors).toBeUndefined();
    const tooLong = await server.graphql(`query ($t: String!) { searchProductPage(term: $t) { total } }`, {
      t: `${emoji}🎮`,
    });
    expectFieldError(tooLong, 'searchProductPage', 'BAD_USER_INPUT');
  });

  it('accepts the limits themselves', async () => {
    const reply = await server.graphql(
      `query ($t: String!) {
        a: productPage(perPage: 100, page: 1) { total }
        b: products(first: 100) { totalCount }
        c: products(last: 100) { totalCount }
        d: searchProductPage(term: $t) { total }
      }`,
      { t: 'a'.repeat(200) },
    );
    expect(reply.body.errors).toBeUndefined();
  });

  it('reports every bad argument at once, Laravel style', async () => {
    const reply = await server.graphql(`{ searchProductPage(term: " ", page: 0, perPage: 101) { total } }`);
    const error = expectFieldError(reply, 'searchProductPage', 'BAD_USER_INPUT');
    expect(error.message).toBe('The term field is required. (and 2 more errors)');
    expect(error.extensions?.errors).toEqual({
      term: ['The term field is required.'],
      page: ['The page field must be at least 1.'],
      perPage: ['The per page field must not be greater than 100.'],
    });
  });

  it('reports the error at the path of the bad field', async () => {
    const reply = await server.graphql(
      `{ good: productPage(perPage: 1) { total } bad: productPage(perPage: 0) { total } }`,
    );
    expect(reply.body.data).toBeNull(); // ProductPage! is non-null, so the error reaches data.
    expect(reply.body.errors?.map((error) => [error.extensions?.code, error.path])).toEqual([
      ['BAD_USER_INPUT', ['bad']],
    ]);
  });
});

describe('GraphQL request errors', () => {
  it.each([
    ['{ nope }', 'GRAPHQL_VALIDATION_FAILED'],
    ['{ searchProductPage { total } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['{ productPage(perPage: "x") { total } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['{ productPage(perPage: 3000000000) { total } }', 'GRAPHQL_VALIDATION_FAILED'],
    ['{ products(', 'GRAPHQL_PARSE_FAILED'],
  ])('answers %j with %s and no data', async (query, code) => {
    const reply = await server.graphql(query);
    expect(reply.body.data).toBeUndefined();
    singleError(reply, code);
  });
});

describe('masking of unexpected errors', () => {
  let broken: TestServer;
  beforeAll(async () => {
    broken = await startTestServer();
  });
  afterAll(() => broken.stop());
  afterEach(() => vi.restoreAllMocks());

  function expectMasked(reply: GraphQLReply) {
    expect(reply.status).toBe(200);
    const text = JSON.stringify(reply.body);
    expect(reply.body.errors?.length).toBeGreaterThan(0);
    for (const error of reply.body.errors ?? []) {
      expect(error.message).toBe('Unexpected error.');
      expect(error.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR' });
    }
    expect(text).not.toMatch(/stack|originalError|RangeError|not money|FerretDB|InternalError|\.ts:/);
  }

  it('masks a page whose read fails unexpectedly', async () => {
    failEveryRead(unexpectedServerError);
    const reply = await broken.graphql(`{ productPage(perPage: 100, page: 1) { items { databaseId } } }`);
    expectMasked(reply);
    expect(reply.body.errors?.[0]?.path).toEqual(['productPage']);
  });

  it('masks a node whose read fails', async () => {
    failEveryRead(unexpectedServerError);
    expectMasked(
      await broken.graphql(`query ($id: ID!) { node(id: $id) { ... on Product { name } } }`, {
        id: globalId('Product', 1),
      }),
    );
  });

  it('masks the same failure inside a connection', async () => {
    failEveryRead(unexpectedServerError);
    expectMasked(
      await broken.graphql(`{ products(first: 100) { edges { node { variant { databaseId } } } } }`),
    );
  });

  it('serves again once the fault is gone', async () => {
    const reply = await broken.graphql(`{ products(first: 3) { edges { node { variant { name } } } } }`);
    expect(reply.body.errors).toBeUndefined();
  });

  it('answers /api/v1 with a generic 500 for the same fault', async () => {
    failEveryRead(unexpectedServerError);
    const response = await broken.request('/api/v1/products?per_page=100');
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ message: 'Server Error.' });
  });
});
