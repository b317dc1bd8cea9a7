import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { ORDER_FIELDS, PRODUCT_FIELDS, dataOf, globalId, singleError } from './helpers';

/**
 * Same data both ways: for a set of product pages, searches and orders, /api/v1 and GraphQL are
 * asked the same question and every value must agree after the documented renaming (camelCase to
 * snake_case, enums in lower case, databaseId to id). The renaming is written out here, field by
 * field, rather than borrowed from the server's own REST operations.
 */

let server: TestServer;
let admin: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  admin = bearer(await mintToken({ sub: 'support_agent', scope: 'orders:read:all' }));
});
afterAll(() => server.stop());

// ------------------------------------------------------------------ the documented renaming

interface GqlProductMoney {
  amount: string;
  currency: string;
  formatted: string;
  decimal: string;
  localizedDecimal: string;
}

interface GqlProduct {
  id: string;
  databaseId: number;
  name: string;
  url: string;
  description: string;
  shortDescription: string;
  notes: string | null;
  categoryName: string;
  brandName: string;
  brandId: string;
  images: string[];
  region: string;
  channel: string;
  tags: string[];
  isPermanentOutOfStock: boolean;
  discountPercentage: number;
  variant: {
    id: string;
    databaseId: number;
    name: string;
    price: GqlProductMoney;
    faceValue: GqlProductMoney;
  };
  createdAt: string;
  updatedAt: string;
}

function restProductMoney(money: GqlProductMoney) {
  return {
    amount: money.amount,
    currency: money.currency,
    formatted: money.formatted,
    decimal: money.decimal,
    localized_decimal: money.localizedDecimal,
  };
}

/** A GraphQL Product under its /api/v1 names, in the contract's field order. */
function restProduct(product: GqlProduct) {
  expect(product.id).toBe(globalId('Product', product.databaseId));
  expect(product.variant.id).toBe(globalId('Variant', product.variant.databaseId));
  return {
    id: product.databaseId,
    name: product.name,
    url: product.url,
    description: product.description,
    short_description: product.shortDescription,
    notes: product.notes,
    category_name: product.categoryName,
    brand_name: product.brandName,
    brand_id: product.brandId,
    images: product.images,
    region: product.region,
    channel: product.channel,
    tags: product.tags,
    isPermanentOutOfStock: product.isPermanentOutOfStock,
    discount_percentage: product.discountPercentage,
    variant: {
      id: product.variant.databaseId,
      name: product.variant.name,
      price: restProductMoney(product.variant.price),
      face_value: restProductMoney(product.variant.faceValue),
    },
    created_at: product.createdAt,
    updated_at: product.updatedAt,
  };
}

interface GqlPage {
  items: GqlProduct[];
  currentPage: number;
  perPage: number;
  total: number;
  lastPage: number;
  from: number | null;
  to: number | null;
}

function restMeta(page: GqlPage) {
  return {
    current_page: page.currentPage,
    from: page.from,
    last_page: page.lastPage,
    per_page: page.perPage,
    to: page.to,
    total: page.total,
  };
}

interface GqlOrderMoney {
  amount: number;
  currency: string;
  formatted: string;
}

interface GqlOrder {
  id: string;
  databaseId: number;
  ulid: string;
  orderNumber: string;
  fulfillmentStatus: string;
  paymentStatus: string;
  subtotal: GqlOrderMoney;
  conversionFees: GqlOrderMoney;
  total: GqlOrderMoney;
  currency: string;
  items: {
    id: string;
    databaseId: number;
    productName: string;
    variantName: string;
    quantity: number;
    unitPrice: GqlOrderMoney;
    totalPrice: GqlOrderMoney;
    createdAt: string;
    updatedAt: string;
  }[];
  createdAt: string;
  updatedAt: string;
}

/** /api/v1 order money has no currency member: it is the order's, which GraphQL repeats. */
function restOrderMoney(money: GqlOrderMoney, currency: string) {
  expect(money.currency).toBe(currency);
  return { amount: money.amount, formatted: money.formatted };
}

/** A GraphQL Order under its /api/v1 names: enums in lower case, databaseId as id. */
function restOrder(order: GqlOrder) {
  expect(order.id).toBe(globalId('Order', order.databaseId));
  const money = (value: GqlOrderMoney) => restOrderMoney(value, order.currency);
  return {
    id: order.databaseId,
    ulid: order.ulid,
    order_number: order.orderNumber,
    fulfillment_status: order.fulfillmentStatus.toLowerCase(),
    payment_status: order.paymentStatus.toLowerCase(),
    subtotal: money(order.subtotal),
    conversion_fees: money(order.conversionFees),
    total: money(order.total),
    currency: order.currency,
    items: order.items.map((item) => {
      expect(item.id).toBe(globalId('OrderItem', item.databaseId));
      return {
        id: item.databaseId,
        product_name: item.productName,
        variant_name: item.variantName,
        quantity: item.quantity,
        unit_price: money(item.unitPrice),
        total_price: money(item.totalPrice),
        created_at: item.createdAt,
        updated_at: item.updatedAt,
      };
    }),
    created_at: order.createdAt,
    updated_at: order.updatedAt,
  };
}

// ------------------------------------------------------------------ asking both APIs

interface RestPage {
  data: unknown[];
  links: { first: string; last: string; prev: string | null; next: string | null };
  meta: ReturnType<typeof restMeta>;
}

async function rest<T>(path: string, headers: Record<string, string> = {}): Promise<T> {
  const response = await server.request(path, { headers });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

const PAGE_SELECTION = `items { ...AllProductFields } currentPage perPage total lastPage from to`;

interface Window {
  edges: { cursor: string; node: GqlProduct }[];
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean };
}

/** The connection window that holds the same products as numbered page `page` of `perPage`. */
async function connectionWindow(
  field: 'products' | 'searchProducts',
  filter: Record<string, string>,
  page: number,
  perPage: number,
): Promise<Window> {
  const argList = Object.keys(filter)
    .map((name) => `${name}: $${name}`)
    .join(', ');
  const declarations = Object.keys(filter)
    .map((name) => `$${name}: String${name === 'term' ? '!' : ''}`)
    .join(', ');
  const query = `query (${declarations}${declarations ? ', ' : ''}$first: Int, $after: String) {
    connection: ${field}(${argList}${argList ? ', ' : ''}first: $first, after: $after) {
      totalCount
      edges { cursor node { ...AllProductFields } }
      pageInfo { hasNextPage hasPreviousPage }
    }
  } ${PRODUCT_FIELDS}`;
  let after: string | null = null;
  if (page > 1) {
    // Skip to the page's start with cursors: the window after the last product of the page before.
    const skip = (page - 1) * perPage;
    const before = dataOf<{ connection: Window }>(
      await server.graphql(query, { ...filter, first: Math.min(skip, 100) }),
    );
    after = before.connection.edges.at(-1)?.cursor ?? null;
    expect(skip).toBeLessThanOrEqual(100);
  }
  return dataOf<{ connection: Window }>(await server.graphql(query, { ...filter, first: perPage, after }))
    .connection;
}

interface PageCase {
  name: string;
  rest: string;
  graphqlField: 'productPage' | 'searchProductPage';
  graphqlArgs: Record<string, string | number>;
  connection: { field: 'products' | 'searchProducts'; filter: Record<string, string> };
}

const PAGE_CASES: PageCase[] = [
  {
    name: 'the plain first page',
    rest: '/api/v1/products',
    graphqlField: 'productPage',
    graphqlArgs: {},
    connection: { field: 'products', filter: {} },
  },
  {
    name: 'page 2',
    rest: '/api/v1/products?page=2',
    graphqlField: 'productPage',
    graphqlArgs: { page: 2 },
    connection: { field: 'products', filter: {} },
  },
  {
    name: 'page 3, four per page',
    rest: '/api/v1/products?page=3&per_page=4',
    graphqlField: 'productPage',
    graphqlArgs: { page: 3, perPage: 4 },
    connection: { field: 'products', filter: {} },
  },
  {
    name: 'a page past the end',
    rest: '/api/v1/products?page=9&per_page=5',
    graphqlField: 'productPage',
    graphqlArgs: { page: 9, perPage: 5 },
    connection: { field: 'products', filter: {} },
  },
  {
    name: 'search "gift"',
    rest: '/api/v1/products?search=gift',
    graphqlField: 'productPage',
    graphqlArgs: { search: 'gift' },
    connection: { field: 'products', filter: { search: 'gift' } },
  },
  {
    name: 'search "gift", page 2, two per page',
    rest: '/api/v1/products?search=gift&per_page=2&page=2',
    graphqlField: 'productPage',
    graphqlArgs: { search: 'gift', perPage: 2, page: 2 },
    connection: { field: 'products', filter: { search: 'gift' } },
  },
  {
    name: 'category "software"',
    rest: '/api/v1/products?category=software',
    graphqlField: 'productPage',
    graphqlArgs: { category: 'software' },
    connection: { field: 'products', filter: { category: 'software' } },
  },
  {
    name: 'search and category together',
    rest: '/api/v1/products?search=music&category=Subscriptions',
    graphqlField: 'productPage',
    graphqlArgs: { search: 'music', category: 'Subscriptions' },
    connection: { field: 'products', filter: { search: 'music', category: 'Subscriptions' } },
  },
  {
    name: 'searchProducts term "soundwave"',
    rest: '/api/v1/products/search?term=soundwave',
    graphqlField: 'searchProductPage',
    graphqlArgs: { term: 'soundwave' },
    connection: { field: 'searchProducts', filter: { term: 'soundwave' } },
  },
  {
    name: 'searchProducts term "gift card", page 2, two per page',
    rest: '/api/v1/products/search?term=gift%20card&per_page=2&page=2',
    graphqlField: 'searchProductPage',
    graphqlArgs: { term: 'gift card', perPage: 2, page: 2 },
    connection: { field: 'searchProducts', filter: { term: 'gift card' } },
  },
  {
    name: 'every product on one page',
    rest: '/api/v1/products?per_page=100',
    graphqlField: 'productPage',
    graphqlArgs: { perPage: 100 },
    connection: { field: 'products', filter: {} },
  },
];

describe('product pages agree', () => {
  it.each(PAGE_CASES)('$name', async (testCase) => {
    const restPage = await rest<RestPage>(testCase.rest);

    const types: Record<string, string> = {
      page: 'Int',
      perPage: 'Int',
      search: 'String',
      category: 'String',
      term: 'String!',
    };
    const names = Object.keys(testCase.graphqlArgs);
    const declarations = names.map((name) => `$${name}: ${types[name]}`).join(', ');
    const args = names.map((name) => `${name}: $${name}`).join(', ');
    const query = `query ${declarations ? `(${declarations})` : ''} {
      page: ${testCase.graphqlField}${args ? `(${args})` : ''} { ${PAGE_SELECTION} }
    } ${PRODUCT_FIELDS}`;
    const page = dataOf<{ page: GqlPage }>(await server.graphql(query, testCase.graphqlArgs)).page;

    // Numbered page: every product value and every meta number.
    expect(restPage.data).toEqual(page.items.map(restProduct));
    expect(restPage.meta).toEqual(restMeta(page));
    expect(restPage.links.prev === null).toBe(page.currentPage === 1);
    expect(restPage.links.next === null).toBe(page.currentPage >= page.lastPage);

    // Cursor window over the same products.
    if (restPage.data.length > 0) {
      const window = await connectionWindow(
        testCase.connection.field,
        testCase.connection.filter,
        page.currentPage,
        page.perPage,
      );
      expect(restPage.data).toEqual(window.edges.map((edge) => restProduct(edge.node)));
      expect(window.totalCount).toBe(restPage.meta.total);
      expect(window.pageInfo.hasNextPage).toBe(restPage.links.next !== null);
      expect(window.pageInfo.hasPreviousPage).toBe(restPage.links.prev !== null);
    }
  });

  it('covers every product through the pages', async () => {
    const restPage = await rest<RestPage>('/api/v1/products?per_page=100');
    expect(restPage.data).toHaveLength(20);
  });
});

describe('orders agree', () => {
  const ORDER = `query ($ulid: ID!) { order(ulid: $ulid) { ...AllOrderFields } } ${ORDER_FIELDS}`;
  const NODE = `query ($id: ID!) { node(id: $id) { ...AllOrderFields } } ${ORDER_FIELDS}`;

  it.each(FIXTURE_ORDERS.map((order) => [order.id, order.ulid, order.customer_id]))(
    'order %i (%s) as an orders:read:all token and as its customer',
    async (id, ulid, customer) => {
      const own = bearer(await mintToken({ sub: customer }));
      for (const headers of [admin, own]) {
        const restOrderBody = await rest<unknown>(`/api/v1/orders/${ulid}`, headers);
        const byUlid = dataOf<{ order: GqlOrder }>(await server.graphql(ORDER, { ulid }, headers)).order;
        const byNode = dataOf<{ node: GqlOrder }>(
          await server.graphql(NODE, { id: globalId('Order', id) }, headers),
        ).node;
        expect(restOrderBody).toEqual(restOrder(byUlid));
        expect(restOrderBody).toEqual(restOrder(byNode));
      }
    },
  );

  it('agrees on a lower-case ULID', async () => {
    const ulid = FIXTURE_ORDERS[3]!.ulid.toLowerCase();
    const restOrderBody = await rest<unknown>(`/api/v1/orders/${ulid}`, admin);
    const order = dataOf<{ order: GqlOrder }>(await server.graphql(ORDER, { ulid }, admin)).order;
    expect(restOrderBody).toEqual(restOrder(order));
  });
});

describe('failures agree', () => {
  const ORDER = `query ($ulid: ID!) { order(ulid: $ulid) { databaseId } }`;

  it.each([
    ['anonymous', FIXTURE_ORDERS[0]!.ulid, null, 401, 'UNAUTHENTICATED', 'Unauthenticated.'],
    [
      "another customer's order",
      FIXTURE_ORDERS[2]!.ulid,
      FIXTURE_CUSTOMERS.alice,
      403,
      'FORBIDDEN',
      'This action is unauthorized.',
    ],
    [
      'an unknown order',
      '01KZZZZZZZZZZZZZZZZZZZZZZZ',
      FIXTURE_CUSTOMERS.alice,
      404,
      'NOT_FOUND',
      'Order not found.',
    ],
    ['a path that is no ULID', 'nope', FIXTURE_CUSTOMERS.alice, 404, 'NOT_FOUND', 'Order not found.'],
  ] as const)(
    '%s: %i on /api/v1, the matching code on GraphQL',
    async (_name, ulid, sub, status, code, message) => {
      const headers = sub ? bearer(await mintToken({ sub })) : {};
      const response = await server.request(`/api/v1/orders/${ulid}`, { headers });
      expect(response.status).toBe(status);
      expect(await response.json()).toEqual({ message });
      const error = singleError(await server.graphql(ORDER, { ulid }, headers), code);
      expect(error.message).toBe(message);
    },
  );

  it.each([
    ['/api/v1/products?per_page=101', '{ productPage(perPage: 101) { total } }', { per_page: 'perPage' }],
    [
      '/api/v1/products?page=0&per_page=0',
      '{ productPage(page: 0, perPage: 0) { total } }',
      { page: 'page', per_page: 'perPage' },
    ],
    [
      `/api/v1/products?search=${'x'.repeat(201)}`,
      `{ productPage(search: "${'x'.repeat(201)}") { total } }`,
      { search: 'search' },
    ],
    ['/api/v1/products/search?term=%20', '{ searchProductPage(term: " ") { total } }', { term: 'term' }],
    [
      `/api/v1/products/search?term=${'x'.repeat(201)}`,
      `{ searchProductPage(term: "${'x'.repeat(201)}") { total } }`,
      { term: 'term' },
    ],
  ] as const)(
    'validation of %s: 422 on /api/v1, BAD_USER_INPUT with the same messages',
    async (path, query, names) => {
      const response = await server.request(path);
      expect(response.status).toBe(422);
      const body = (await response.json()) as { message: string; errors: Record<string, string[]> };
      const error = singleError(await server.graphql(query), 'BAD_USER_INPUT');
      const graphqlErrors = error.extensions?.errors as Record<string, string[]>;
      expect(Object.keys(body.errors).sort()).toEqual(Object.keys(names).sort());
      for (const [restName, graphqlName] of Object.entries(names)) {
        expect(body.errors[restName]).toEqual(graphqlErrors[graphqlName]);
      }
      expect(body.message).toBe(error.message);
    },
  );
});
