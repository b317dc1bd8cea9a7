import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app';
import { createViewerResolver } from '../../src/auth/tokens';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { getOrder, listProducts, searchProducts } from '../../src/rest/endpoints';
import { parseQuery, readQuery } from '../../src/rest/query';
import { selectionOf } from '../../src/rest/selection';
import { Product } from '../../src/rest/bodies';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { TEST_JWT_SECRET } from '../support/server';
import { ORDERS } from './helpers';

/**
 * The endpoint table without a server: query → variables and 422 bodies as pure functions, and
 * data → body through `yoga.fetch` in-process, over a real database.
 */

const query = (text: string) => readQuery(new URLSearchParams(text));
const parse = (endpoint: typeof listProducts, text: string) => parseQuery(endpoint.query, query(text));
const variables = (endpoint: typeof listProducts, text: string) => {
  const parsed = parse(endpoint, text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return endpoint.variables(parsed.value, {});
};

describe('query → variables', () => {
  it('maps the REST names to the operation variables, trimmed, blanks dropped, last value wins', () => {
    expect(variables(listProducts, 'per_page=5&page=2&search=%20gift%20card%20&category=Games')).toEqual({
      page: 2,
      perPage: 5,
      search: 'gift card',
      category: 'Games',
    });
    expect(variables(listProducts, 'search=&category=%20&per_page=1&per_page=7&foo=bar')).toEqual({
      page: undefined,
      perPage: 7,
      search: undefined,
      category: undefined,
    });
    expect(variables(searchProducts, 'term=card&per_page=%202&page=%201%20')).toEqual({
      term: 'card',
      page: 1,
      perPage: 2,
    });
  });

  it('reads the order from the path, decoded', () => {
    const params = getOrder.match('/api/v1/orders/01kE78KGFSQ4ZC7N2XW8RTB3MD');
    expect(getOrder.variables({}, params!)).toEqual({ ulid: '01kE78KGFSQ4ZC7N2XW8RTB3MD' });
    expect(getOrder.match('/api/v1/orders/a/b')).toBeNull();
    expect(getOrder.match('/api/v1/orders/%E0%A4%A')).toEqual({ order: '%E0%A4%A' });
  });
});

describe('422 bodies', () => {
  const mustBeInteger = (label: string) => `The ${label} field must be an integer.`;

  it.each([
    ['per_page[]=1', 'per_page', mustBeInteger('per page')],
    ['per_page[x]=1', 'per_page', mustBeInteger('per page')],
    ['page[]=1', 'page', mustBeInteger('page')],
    ['per_page=0x10', 'per_page', mustBeInteger('per page')],
    ['per_page=1e2', 'per_page', mustBeInteger('per page')],
    ['per_page=02', 'per_page', mustBeInteger('per page')],
    ['per_page=%2B2', 'per_page', mustBeInteger('per page')],
    ['page=99999999999999999999', 'page', mustBeInteger('page')],
    ['search[]=a', 'search', 'The search field must be a string.'],
    ['search[$ne]=x', 'search', 'The search field must be a string.'],
    ['category[x]=Games', 'category', 'The category field must be a string.'],
    [
      `category=${'c'.repeat(201)}`,
      'category',
      'The category field must not be greater than 200 characters.',
    ],
  ])('GET /api/v1/products?%s → %s: "%s"', (text, field, message) => {
    expect(parse(listProducts, text)).toEqual({ ok: false, errors: { [field]: [message] } });
  });

  it('a plain value after an array replaces it, as in PHP', () => {
    expect(parse(listProducts, 'per_page[]=1&per_page=3')).toMatchObject({ ok: true });
    expect(parse(listProducts, 'per_page=3&per_page[]=1')).toMatchObject({ ok: false });
  });

  it('term[] and a missing term on the search endpoint; fields in the schema order', () => {
    expect(parse(searchProducts, 'term[]=x')).toEqual({
      ok: false,
      errors: { term: ['The term field must be a string.'] },
    });
    expect(parse(searchProducts, 'per_page=101&page=0')).toEqual({
      ok: false,
      errors: {
        term: ['The term field is required.'],
        page: ['The page field must be at least 1.'],
        per_page: ['The per page field must not be greater than 100.'],
      },
    });
  });

  it('counts characters, not UTF-16 units', () => {
    expect(parse(searchProducts, `term=${'🎮'.repeat(200)}`)).toMatchObject({ ok: true });
    expect(parse(searchProducts, `term=${'🎮'.repeat(201)}`)).toMatchObject({ ok: false });
  });
});

describe('data → body', () => {
  it('the body schema is the selection: /api/v1 names are aliases of the schema fields', () => {
    const selection = selectionOf(Product);
    expect(selection).toContain('id: databaseId');
    expect(selection).toContain('short_description: shortDescription');
    expect(selection).toContain(
      'face_value: faceValue { amount currency formatted decimal localized_decimal: localizedDecimal }',
    );
    expect(selection).toContain(' isPermanentOutOfStock ');
  });

  it('order statuses come back to their stored lower case', () => {
    const body = getOrder.body(
      { order: { id: 1, fulfillment_status: 'PARTIALLY_FULFILLED', payment_status: 'PENDING' } },
      {
        query: new URLSearchParams(),
        path: '/api/v1/orders/x',
        baseUrl: 'http://x',
      },
    );
    expect(body).toEqual({ id: 1, fulfillment_status: 'partially_fulfilled', payment_status: 'pending' });
  });
});

describe('in-process (yoga.fetch)', () => {
  let testDb: TestDatabase;
  let app: App;
  beforeAll(async () => {
    testDb = await openTestDatabase('endpoints');
    await loadFixtures(testDb.db);
    const config = loadConfig({
      NODE_ENV: 'test',
      MONGODB_URI: testDb.uri,
      MONGODB_DB: testDb.dbName,
      JWT_SECRET: TEST_JWT_SECRET,
      RESPONSE_CACHE_TTL_MS: '0',
      LOG_LEVEL: 'silent',
    });
    app = createApp({
      config,
      database: testDb,
      resolveViewer: createViewerResolver({ ...config.jwt, secret: TEST_JWT_SECRET }),
      logger: createLogger('silent'),
    });
  });
  afterAll(() => testDb.close());

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await app.fetch(`http://in-process.test${path}`, { headers });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('a product page: the envelope, links on the request origin keeping the kept parameters', async () => {
    const { status, body } = await get('/api/v1/products?per_page=2&page=2&foo=bar');
    expect(status).toBe(200);
    expect((body.data as { id: number }[]).map((product) => product.id)).toEqual([3, 4]);
    expect(body.links).toEqual({
      first: 'http://in-process.test/api/v1/products?per_page=2&page=1',
      last: 'http://in-process.test/api/v1/products?per_page=2&page=10',
      prev: 'http://in-process.test/api/v1/products?per_page=2&page=1',
      next: 'http://in-process.test/api/v1/products?per_page=2&page=3',
    });
    expect(body.meta).toEqual({ current_page: 2, from: 3, last_page: 10, per_page: 2, to: 4, total: 20 });
  });

  it('an array parameter answers the Laravel 422 body', async () => {
    expect(await get('/api/v1/products?per_page%5B%5D=1')).toEqual({
      status: 422,
      body: {
        message: 'The per page field must be an integer.',
        errors: { per_page: ['The per page field must be an integer.'] },
      },
    });
  });

  it('an order in the contract shape, statuses in lower case', async () => {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('cus_alice')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const { status, body } = await get(`/api/v1/orders/${ORDERS[1]}`, { authorization: `Bearer ${token}` });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: 1, ulid: ORDERS[1] });
    expect(body.fulfillment_status).toMatch(/^[a-z_]+$/);
    expect(body.payment_status).toMatch(/^[a-z_]+$/);
  });

  it('GraphQL applies the same category limit, from the same constant', async () => {
    const response = await app.fetch('http://in-process.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query ($c: String) { productPage(category: $c) { total } }',
        variables: { c: 'c'.repeat(201) },
      }),
    });
    const reply = (await response.json()) as {
      errors?: { message: string; extensions?: { code?: string } }[];
    };
    expect(reply.errors?.[0]?.message).toBe('The category field must not be greater than 200 characters.');
    expect(reply.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
