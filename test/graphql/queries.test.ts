import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MoneyDoc, ProductDoc } from '../../src/db/documents';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import {
  ALL_PRODUCT_IDS,
  CONTRACT_TIMESTAMP,
  ORDER_FIELDS,
  PRODUCT_FIELDS,
  contractTimestamp,
  dataOf,
  fixtureIds,
  globalId,
  idsOf,
  matchesSearch,
  type ConnectionReply,
  CONNECTION_PAGE,
} from './helpers';

/** Every query field and every argument, over HTTP against the real server and the fixtures. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const CDN = 'https://cdn.example.com/products';

/** en-US money, written from the contract: symbol, grouping, exactly two decimals. */
const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£', CAD: 'CA$' };
function decimal(minor: number): string {
  return `${Math.trunc(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}
function grouped(minor: number): string {
  const [whole = '', fraction = ''] = decimal(minor).split('.');
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${fraction}`;
}
function productMoney(money: MoneyDoc) {
  return {
    amount: String(money.amount),
    currency: money.currency,
    formatted: `${SYMBOLS[money.currency]}${grouped(money.amount)}`,
    decimal: decimal(money.amount),
    localizedDecimal: grouped(money.amount),
  };
}

/** A fixture as the schema presents it. */
function expectedProduct(product: ProductDoc) {
  return {
    id: globalId('Product', product.id),
    databaseId: product.id,
    name: product.name,
    url: product.url,
    description: product.description,
    shortDescription: product.short_description,
    notes: product.notes,
    categoryName: product.category_name,
    brandName: product.brand_name,
    brandId: product.brand_id,
    images: product.images,
    region: product.region,
    channel: product.channel,
    tags: product.tags,
    isPermanentOutOfStock: product.is_permanent_out_of_stock,
    discountPercentage: product.discount_percentage,
    variant: {
      id: globalId('Variant', product.variant.id),
      databaseId: product.variant.id,
      name: product.variant.name,
      price: productMoney(product.variant.price),
      faceValue: productMoney(product.variant.face_value),
    },
    createdAt: contractTimestamp(product.created_at),
    updatedAt: contractTimestamp(product.updated_at),
  };
}

const CONNECTION_FIELDS = `totalCount ${CONNECTION_PAGE}`;

async function products(args: string): Promise<ConnectionReply> {
  const reply = await server.graphql(`{ products${args} { ${CONNECTION_FIELDS} } }`);
  return dataOf<{ products: ConnectionReply }>(reply).products;
}

async function searchProducts(args: string): Promise<ConnectionReply> {
  const reply = await server.graphql(`{ searchProducts${args} { ${CONNECTION_FIELDS} } }`);
  return dataOf<{ searchProducts: ConnectionReply }>(reply).searchProducts;
}

interface PageReply {
  items: { databaseId: number }[];
  currentPage: number;
  perPage: number;
  total: number;
  lastPage: number;
  from: number | null;
  to: number | null;
}

const PAGE_FIELDS = 'items { databaseId } currentPage perPage total lastPage from to';

describe('Product fields', () => {
  it('serves product 11 with every field, exactly', async () => {
    const reply = await server.graphql(
      `query ($id: ID!) { node(id: $id) { ...AllProductFields } } ${PRODUCT_FIELDS}`,
      { id: globalId('Product', 11) },
    );
    const price = {
      amount: '102550',
      currency: 'USD',
      formatted: '$1,025.50',
      decimal: '1025.50',
      localizedDecimal: '1,025.50',
    };
    expect(dataOf(reply).node).toEqual({
      id: globalId('Product', 11),
      databaseId: 11,
      name: 'DevForge C++ Studio License',
      url: 'https://store.example.com/products/devforge-cpp-studio-license',
      description:
        'A perpetual licence for DevForge C++ Studio, the integrated development environment with a debugger, profiler and static analyser.',
      shortDescription: 'Perpetual DevForge C++ Studio licence for one developer.',
      notes: 'Perpetual licence for one named developer.',
      categoryName: 'Software',
      brandName: 'DevForge',
      brandId: 'brd_devforge',
      images: [1, 2, 3, 4].map((n) => `${CDN}/devforge-cpp-studio-license/${n}.jpg`),
      region: 'Global',
      channel: 'API',
      tags: ['developer', 'ide', 'c++'],
      isPermanentOutOfStock: false,
      discountPercentage: 0,
      variant: {
        id: globalId('Variant', 1011),
        databaseId: 1011,
        name: '1 developer, perpetual',
        price,
        faceValue: price,
      },
      createdAt: '2025-01-15T10:30:00+00:00',
      updatedAt: '2025-10-15T10:30:00+00:00',
    });
  });

  it('serves every fixture product with every field as stored', async () => {
    const reply = await server.graphql(
      `{ products(first: 20) { edges { node { ...AllProductFields } } } } ${PRODUCT_FIELDS}`,
    );
    const nodes = dataOf<{ products: { edges: { node: unknown }[] } }>(reply).products.edges.map(
      (edge) => edge.node,
    );
    expect(nodes).toEqual(FIXTURE_PRODUCTS.map(expectedProduct));
  });

  it('serves timestamps with +00:00 and no fraction, notes as null when absent, empty tag lists', async () => {
    const reply = await server.graphql(
      `{ products(first: 100) { edges { node { databaseId notes tags createdAt updatedAt } } } }`,
    );
    const nodes = dataOf<{
      products: {
        edges: {
          node: {
            databaseId: number;
            notes: string | null;
            tags: string[];
            createdAt: string;
            updatedAt: string;
          };
        }[];
      };
    }>(reply).products.edges.map((edge) => edge.node);
    for (const node of nodes) {
      expect(node.createdAt).toMatch(CONTRACT_TIMESTAMP);
      expect(node.updatedAt).toMatch(CONTRACT_TIMESTAMP);
    }
    expect(nodes.find((node) => node.databaseId === 1)?.notes).toBeNull();
    expect(nodes.find((node) => node.databaseId === 3)?.tags).toEqual([]);
  });
});

describe('products', () => {
  it('defaults to the first 15 products in id order, with the total', async () => {
    const connection = await products('');
    expect(idsOf(connection)).toEqual(ALL_PRODUCT_IDS.slice(0, 15));
    expect(connection.totalCount).toBe(20);
    expect(connection.pageInfo.hasNextPage).toBe(true);
    expect(connection.pageInfo.hasPreviousPage).toBe(false);
    expect(connection.pageInfo.startCursor).toBe(connection.edges[0]?.cursor);
    expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)?.cursor);
  });

  it('takes first, and last from the end', async () => {
    expect(idsOf(await products('(first: 4)'))).toEqual([1, 2, 3, 4]);
    const tail = await products('(last: 4)');
    expect(idsOf(tail)).toEqual([17, 18, 19, 20]);
    expect(tail.pageInfo.hasPreviousPage).toBe(true);
    expect(tail.pageInfo.hasNextPage).toBe(false);
  });

  it.each([
    ['gift'],
    ['GIFT cards'],
    ['soundwave'],
    ['Soundwave premium 12'],
    ['music'],
    ['c++'],
    ['café'],
    ['🎮'],
    ['northwind 100'],
  ])('filters by search %j with the contract rule', async (search) => {
    const expected = fixtureIds((product) => matchesSearch(product, search));
    expect(expected.length).toBeGreaterThan(0);
    const connection = await products(`(first: 100, search: ${JSON.stringify(search)})`);
    expect(idsOf(connection)).toEqual(expected);
    expect(connection.totalCount).toBe(expected.length);
  });

  it.each([['.*'], ['$where'], ['gift nothing-like-this'], ['['], ['^Northwind']])(
    'matches %j literally, finding nothing',
    async (search) => {
      const connection = await products(`(search: ${JSON.stringify(search)})`);
      expect(idsOf(connection)).toEqual([]);
      expect(connection.totalCount).toBe(0);
      expect(connection.pageInfo).toEqual({
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: null,
        endCursor: null,
      });
    },
  );

  it('treats a blank or null search as no filter', async () => {
    expect((await products('(search: "   ", first: 100)')).totalCount).toBe(20);
    expect(idsOf(await products('(search: null, first: 100)'))).toEqual(ALL_PRODUCT_IDS);
  });

  it('filters by category exactly and case-insensitively', async () => {
    const software = fixtureIds((product) => product.category_name === 'Software');
    expect(idsOf(await products('(category: "software")'))).toEqual(software);
    expect(idsOf(await products('(category: "SOFTWARE")'))).toEqual(software);
    const giftCards = await products('(category: "gift cards")');
    expect(idsOf(giftCards)).toEqual(fixtureIds((product) => product.category_name === 'Gift Cards'));
    expect(giftCards.totalCount).toBe(5);
    expect((await products('(category: "Soft")')).totalCount).toBe(0);
  });

  it('combines search and category', async () => {
    const connection = await products('(search: "music", category: "subscriptions")');
    const expected = fixtureIds(
      (product) => product.category_name === 'Subscriptions' && matchesSearch(product, 'music'),
    );
    expect(idsOf(connection)).toEqual(expected);
    expect(connection.totalCount).toBe(expected.length);
    expect((await products('(search: "music", category: "software")')).totalCount).toBe(0);
  });

  it('passes arguments through variables as well as literals', async () => {
    const reply = await server.graphql(
      `query ($first: Int, $search: String, $category: String) {
        products(first: $first, search: $search, category: $category) { ${CONNECTION_FIELDS} }
      }`,
      { first: 2, search: 'gift', category: 'Gift Cards' },
    );
    const connection = dataOf<{ products: ConnectionReply }>(reply).products;
    expect(idsOf(connection)).toEqual([1, 2]);
    expect(connection.totalCount).toBe(5);
  });
});

describe('searchProducts', () => {
  it('finds by term, with first, after, last and before', async () => {
    const expected = fixtureIds((product) => matchesSearch(product, 'soundwave'));
    expect(expected).toEqual([16, 17]);
    const all = await searchProducts('(term: "soundwave")');
    expect(idsOf(all)).toEqual(expected);
    expect(all.totalCount).toBe(2);

    const first = await searchProducts('(term: "gift", first: 2)');
    expect(idsOf(first)).toEqual([1, 2]);
    const next = await searchProducts(`(term: "gift", first: 2, after: "${first.pageInfo.endCursor}")`);
    expect(idsOf(next)).toEqual([3, 4]);
    const last = await searchProducts('(term: "gift", last: 2)');
    expect(idsOf(last)).toEqual([4, 5]);
    const before = await searchProducts(`(term: "gift", last: 2, before: "${last.pageInfo.startCursor}")`);
    expect(idsOf(before)).toEqual([2, 3]);
  });

  it('uses the same matching as products(search:)', async () => {
    for (const term of ['gift', 'Game credit', 'ide', 'vpn privacy']) {
      const viaSearch = await products(`(first: 100, search: ${JSON.stringify(term)})`);
      const viaTerm = await searchProducts(`(first: 100, term: ${JSON.stringify(term)})`);
      expect(idsOf(viaTerm)).toEqual(idsOf(viaSearch));
      expect(viaTerm.totalCount).toBe(viaSearch.totalCount);
    }
  });
});

describe('productPage', () => {
  async function productPage(args: string): Promise<PageReply> {
    return dataOf<{ productPage: PageReply }>(
      await server.graphql(`{ productPage${args} { ${PAGE_FIELDS} } }`),
    ).productPage;
  }

  it('defaults to page 1 of 15', async () => {
    const page = await productPage('');
    expect(page.items.map((item) => item.databaseId)).toEqual(ALL_PRODUCT_IDS.slice(0, 15));
    expect({ ...page, items: undefined }).toEqual({
      items: undefined,
      currentPage: 1,
      perPage: 15,
      total: 20,
      lastPage: 2,
      from: 1,
      to: 15,
    });
  });

  it('serves later pages, the partial last page and past the end', async () => {
    const two = await productPage('(page: 2)');
    expect(two.items.map((item) => item.databaseId)).toEqual([16, 17, 18, 19, 20]);
    expect([two.from, two.to, two.total, two.lastPage]).toEqual([16, 20, 20, 2]);
    const past = await productPage('(page: 3)');
    expect(past).toEqual({
      items: [],
      currentPage: 3,
      perPage: 15,
      total: 20,
      lastPage: 2,
      from: null,
      to: null,
    });
  });

  it('takes perPage from 1 to 100', async () => {
    const one = await productPage('(perPage: 1, page: 20)');
    expect(one.items.map((item) => item.databaseId)).toEqual([20]);
    expect([one.lastPage, one.from, one.to]).toEqual([20, 20, 20]);
    const hundred = await productPage('(perPage: 100)');
    expect(hundred.items.map((item) => item.databaseId)).toEqual(ALL_PRODUCT_IDS);
    expect(hundred.lastPage).toBe(1);
  });

  it('filters by search and category', async () => {
    const gift = await productPage('(search: "gift", perPage: 2, page: 2)');
    const giftIds = fixtureIds((product) => matchesSearch(product, 'gift'));
    expect(gift.items.map((item) => item.databaseId)).toEqual(giftIds.slice(2, 4));
    expect(gift.total).toBe(giftIds.length);
    const software = await productPage('(category: "Software", perPage: 2, page: 3)');
    expect(software).toEqual({
      items: [{ databaseId: 15 }],
      currentPage: 3,
      perPage: 2,
      total: 5,
      lastPage: 3,
      from: 5,
      to: 5,
    });
    const nothing = await productPage('(category: "Nothing")');
    expect(nothing).toEqual({
      items: [],
      currentPage: 1,
      perPage: 15,
      total: 0,
      lastPage: 1,
      from: null,
      to: null,
    });
  });
});

describe('searchProductPage', () => {
  it('pages a search by term', async () => {
    const reply = await server.graphql(
      `query ($term: String!, $page: Int, $perPage: Int) {
        searchProductPage(term: $term, page: $page, perPage: $perPage) { ${PAGE_FIELDS} }
      }`,
      { term: 'GIFT', page: 3, perPage: 2 },
    );
    expect(dataOf<{ searchProductPage: PageReply }>(reply).searchProductPage).toEqual({
      items: [{ databaseId: 5 }],
      currentPage: 3,
      perPage: 2,
      total: 5,
      lastPage: 3,
      from: 5,
      to: 5,
    });
  });

  it('defaults to page 1 of 15', async () => {
    const page = dataOf<{ searchProductPage: PageReply }>(
      await server.graphql(`{ searchProductPage(term: "soundwave") { ${PAGE_FIELDS} } }`),
    ).searchProductPage;
    expect(page).toEqual({
      items: [{ databaseId: 16 }, { databaseId: 17 }],
      currentPage: 1,
      perPage: 15,
      total: 2,
      lastPage: 1,
      from: 1,
      to: 2,
    });
  });
});

describe('order', () => {
  const ORDER_QUERY = `query ($ulid: ID!) { order(ulid: $ulid) { ...AllOrderFields } } ${ORDER_FIELDS}`;

  it('serves order 4 with every field, enums in upper case', async () => {
    const reply = await server.graphql(
      ORDER_QUERY,
      { ulid: '01KGF2V0XBE5RJ9ZH3YPV7NA2G' },
      bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.bob })),
    );
    const usd = (amount: number, formatted: string) => ({ amount, currency: 'USD', formatted });
    expect(dataOf(reply).order).toEqual({
      id: globalId('Order', 4),
      databaseId: 4,
      ulid: '01KGF2V0XBE5RJ9ZH3YPV7NA2G',
      orderNumber: 'ORD-2026-000004',
      fulfillmentStatus: 'PARTIALLY_FULFILLED',
      paymentStatus: 'COMPLETED',
      subtotal: usd(142.19, '$142.19'),
      conversionFees: usd(1.94, '$1.94'),
      total: usd(144.13, '$144.13'),
      currency: 'USD',
      items: [
        {
          id: globalId('OrderItem', 107),
          databaseId: 107,
          productName: 'Atlas Outfitters Gift Card 50 EUR',
          variantName: '50 EUR',
          quantity: 2,
          unitPrice: usd(48.6, '$48.60'),
          totalPrice: usd(97.2, '$97.20'),
          createdAt: '2026-02-02T11:47:05+00:00',
          updatedAt: '2026-02-03T16:30:00+00:00',
        },
        {
          id: globalId('OrderItem', 108),
          databaseId: 108,
          productName: 'Pixelforge 5,500 Gems',
          variantName: '5,500 Gems',
          quantity: 1,
          unitPrice: usd(44.99, '$44.99'),
          totalPrice: usd(44.99, '$44.99'),
          createdAt: '2026-02-02T11:47:05+00:00',
          updatedAt: '2026-02-02T11:49:30+00:00',
        },
      ],
      createdAt: '2026-02-02T11:47:05+00:00',
      updatedAt: '2026-02-03T16:30:00+00:00',
    });
  });

  it('formats a large amount with grouping', async () => {
    const reply = await server.graphql(
      `{ order(ulid: "01KHZKA9ZFN7YB2GJ6VH8SE3PC") { total { amount formatted currency } } }`,
      {},
      bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.bob })),
    );
    expect(dataOf(reply).order).toEqual({
      total: { amount: 1115.49, formatted: '$1,115.49', currency: 'USD' },
    });
  });

  it('matches the ULID case-insensitively', async () => {
    const token = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
    const reply = await server.graphql(
      `{ order(ulid: "01kkntq1x0h6pv9k3jga5ye2rf") { databaseId ulid fulfillmentStatus paymentStatus } }`,
      {},
      token,
    );
    expect(dataOf(reply).order).toEqual({
      databaseId: 2,
      ulid: '01KKNTQ1X0H6PV9K3JGA5YE2RF',
      fulfillmentStatus: 'PENDING',
      paymentStatus: 'PENDING',
    });
  });

  it('lets each customer read their own orders, and the orders:read:all scope read every order', async () => {
    const admin = bearer(await mintToken({ sub: 'support_agent', scope: 'orders:read:all' }));
    for (const order of FIXTURE_ORDERS) {
      const own = bearer(await mintToken({ sub: order.customer_id }));
      for (const headers of [own, admin]) {
        const reply = await server.graphql(ORDER_QUERY, { ulid: order.ulid }, headers);
        const served = dataOf<{
          order: { databaseId: number; fulfillmentStatus: string; paymentStatus: string; items: unknown[] };
        }>(reply).order;
        expect(served.databaseId).toBe(order.id);
        expect(served.fulfillmentStatus).toBe(order.fulfillment_status.toUpperCase());
        expect(served.paymentStatus).toBe(order.payment_status.toUpperCase());
        expect(served.items).toHaveLength(order.items.length);
      }
    }
  });

  it('accepts the scope as a list claim too', async () => {
    const reply = await server.graphql(
      `{ order(ulid: "01KE78KGFSQ4ZC7N2XW8RTB3MD") { databaseId } }`,
      {},
      bearer(await mintToken({ sub: 'support_agent', scope: ['profile', 'orders:read:all'] })),
    );
    expect(dataOf(reply).order).toEqual({ databaseId: 1 });
  });

  it('serves every fulfilment status in upper case', async () => {
    const admin = bearer(await mintToken({ sub: 'support_agent', scope: 'orders:read:all' }));
    const seen = new Set<string>();
    for (const order of FIXTURE_ORDERS) {
      const reply = await server.graphql(
        `query ($u: ID!) { order(ulid: $u) { fulfillmentStatus } }`,
        { u: order.ulid },
        admin,
      );
      seen.add(dataOf<{ order: { fulfillmentStatus: string } }>(reply).order.fulfillmentStatus);
    }
    expect([...seen].sort()).toEqual([
      'COMPLETED',
      'PARTIALLY_FULFILLED',
      'PENDING',
      'PROCESSING',
      'REFUNDED',
    ]);
  });
});
