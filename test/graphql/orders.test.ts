import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderDoc } from '../../src/db/documents';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { CONNECTION_PAGE, ORDER_FIELDS, contractTimestamp, dataOf, globalId, singleError } from './helpers';

/**
 * `viewer.orders` and `orders` over HTTP: paging both ways, every filter, visibility and errors.
 * Expected sequences come from seed/fixtures.ts ordered by created_at, not by the server's keys.
 */

let server: TestServer;
let alice: Record<string, string>;
let bob: Record<string, string>;
let support: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  alice = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
  bob = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.bob }));
  support = bearer(await mintToken({ sub: 'staff_1', scope: 'orders:read:all' }));
});
afterAll(() => server.stop());

const newestFirst = (orders: OrderDoc[]) =>
  [...orders].sort((a, b) => b.created_at.getTime() - a.created_at.getTime()).map((order) => order.id);
const ordersOf = (customer: string) => FIXTURE_ORDERS.filter((order) => order.customer_id === customer);
const ALICE_NEWEST_FIRST = newestFirst(ordersOf(FIXTURE_CUSTOMERS.alice));

interface OrderPage {
  totalCount?: number;
  edges: { cursor: string; node: { databaseId: number } }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}
const idsOf = (page: OrderPage) => page.edges.map((edge) => edge.node.databaseId);

const VIEWER_ORDERS = /* GraphQL */ `
  query MyOrders($first: Int, $after: String, $last: Int, $before: String, $filter: OrderFilter) {
    viewer {
      customerId
      orders(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
        ${CONNECTION_PAGE}
      }
    }
  }
`;
const VIEWER_TOTAL = /* GraphQL */ `
  query MyOrderCount($filter: OrderFilter) {
    viewer {
      orders(first: 0, filter: $filter) {
        totalCount
      }
    }
  }
`;
const ALL_ORDERS = /* GraphQL */ `
  query AllOrders($first: Int, $after: String, $last: Int, $before: String, $filter: OrderFilter) {
    orders(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
      totalCount
      ${CONNECTION_PAGE}
    }
  }
`;

async function myOrders(headers: Record<string, string>, variables: Record<string, unknown>) {
  return dataOf<{ viewer: { customerId: string; orders: OrderPage } }>(
    await server.graphql(VIEWER_ORDERS, variables, headers),
  ).viewer;
}
async function allOrders(variables: Record<string, unknown>, headers = support): Promise<OrderPage> {
  return dataOf<{ orders: OrderPage }>(await server.graphql(ALL_ORDERS, variables, headers)).orders;
}

describe('viewer.orders paging', () => {
  it('lists Alice her own orders, newest first, with the token subject as customerId', async () => {
    const viewer = await myOrders(alice, { first: 100 });
    expect(viewer.customerId).toBe(FIXTURE_CUSTOMERS.alice);
    expect(ALICE_NEWEST_FIRST.length).toBeGreaterThanOrEqual(12);
    expect(idsOf(viewer.orders)).toEqual(ALICE_NEWEST_FIRST);
    expect(viewer.orders.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it('pages forwards five at a time through the same sequence', async () => {
    const seen: number[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const { orders } = await myOrders(alice, { first: 5, after });
      seen.push(...idsOf(orders));
      expect(orders.pageInfo.endCursor).toBe(orders.edges.at(-1)?.cursor ?? null);
      if (!orders.pageInfo.hasNextPage) break;
      after = orders.pageInfo.endCursor;
    }
    expect(seen).toEqual(ALICE_NEWEST_FIRST);
  });

  it('pages backwards four at a time from the oldest end to the same sequence', async () => {
    const pages: number[][] = [];
    let before: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const { orders } = await myOrders(alice, { last: 4, before });
      pages.unshift(idsOf(orders));
      if (!orders.pageInfo.hasPreviousPage) break;
      before = orders.pageInfo.startCursor;
    }
    expect(pages.flat()).toEqual(ALICE_NEWEST_FIRST);
    expect(pages[pages.length - 1]).toEqual(ALICE_NEWEST_FIRST.slice(-4));
  });

  it('returns the window between an after and a before cursor', async () => {
    const { orders } = await myOrders(alice, { first: 100 });
    const cursorOf = (id: number) => orders.edges.find((edge) => edge.node.databaseId === id)!.cursor;
    const [, second, , , fifth] = ALICE_NEWEST_FIRST;
    const window = await myOrders(alice, { first: 100, after: cursorOf(second!), before: cursorOf(fifth!) });
    expect(idsOf(window.orders)).toEqual(ALICE_NEWEST_FIRST.slice(2, 4));
  });

  it('counts only what matches, and answers first: 0 with null cursors', async () => {
    const reply = dataOf<{ viewer: { orders: { totalCount: number } } }>(
      await server.graphql(VIEWER_TOTAL, {}, alice),
    );
    expect(reply.viewer.orders.totalCount).toBe(ALICE_NEWEST_FIRST.length);
    const empty = await myOrders(alice, { first: 0 });
    expect(empty.orders.edges).toEqual([]);
    expect(empty.orders.pageInfo).toMatchObject({ startCursor: null, endCursor: null });
  });

  it('formats orders exactly as order(ulid:) does', async () => {
    const query = /* GraphQL */ `
      query ($ulid: ID!) {
        order(ulid: $ulid) {
          ...AllOrderFields
        }
        viewer {
          orders(first: 20) {
            edges {
              node {
                ...AllOrderFields
              }
            }
          }
        }
      }
      ${ORDER_FIELDS}
    `;
    const newest = FIXTURE_ORDERS.find((order) => order.id === ALICE_NEWEST_FIRST[0])!;
    const data = dataOf<{ order: unknown; viewer: { orders: { edges: { node: { createdAt: string } }[] } } }>(
      await server.graphql(query, { ulid: newest.ulid }, alice),
    );
    expect(data.viewer.orders.edges[0]?.node).toEqual(data.order);
    expect(data.viewer.orders.edges[0]?.node.createdAt).toBe(contractTimestamp(newest.created_at));
  });
});

const alicesOrders = ordersOf(FIXTURE_CUSTOMERS.alice);
const FILTERS: [string, Record<string, unknown>, (order: OrderDoc) => boolean][] = [
  ['paymentStatus', { paymentStatus: ['PENDING'] }, (o) => o.payment_status === 'pending'],
  [
    'fulfillmentStatus (two values)',
    { fulfillmentStatus: ['PROCESSING', 'REFUNDED'] },
    (o) => ['processing', 'refunded'].includes(o.fulfillment_status),
  ],
  ['currency, any case', { currency: 'eur' }, (o) => o.currency === 'EUR'],
  [
    'createdAfter (exclusive)',
    { createdAfter: '2026-02-14T19:12:05+00:00' },
    (o) => o.created_at.getTime() > Date.parse('2026-02-14T19:12:05Z'),
  ],
  [
    'createdBefore (exclusive), with an offset',
    { createdBefore: '2026-02-25T13:00:41+01:00' },
    (o) => o.created_at.getTime() < Date.parse('2026-02-25T12:00:41Z'),
  ],
  [
    'a date range with fractions of a second',
    { createdAfter: '2026-01-27T16:45:01.999Z', createdBefore: '2026-03-05T07:19:33.001Z' },
    (o) =>
      o.created_at.getTime() > Date.parse('2026-01-27T16:45:01.999Z') &&
      o.created_at.getTime() < Date.parse('2026-03-05T07:19:33.001Z'),
  ],
  [
    'every member at once',
    {
      paymentStatus: ['COMPLETED'],
      fulfillmentStatus: ['COMPLETED', 'PARTIALLY_FULFILLED', 'PROCESSING'],
      currency: 'USD',
      createdAfter: '2026-01-06T00:00:00Z',
      createdBefore: '2026-04-01T00:00:00Z',
    },
    (o) =>
      o.payment_status === 'completed' &&
      ['completed', 'partially_fulfilled', 'processing'].includes(o.fulfillment_status) &&
      o.currency === 'USD' &&
      o.created_at.getTime() > Date.parse('2026-01-06T00:00:00Z') &&
      o.created_at.getTime() < Date.parse('2026-04-01T00:00:00Z'),
  ],
  ['a filter nothing matches', { currency: 'JPY' }, () => false],
];

describe('viewer.orders filters', () => {
  it.each(FILTERS)('filters by %s, in order, with a matching totalCount', async (_name, filter, matches) => {
    const expected = newestFirst(alicesOrders.filter(matches));
    const { orders } = await myOrders(alice, { first: 100, filter });
    expect(idsOf(orders)).toEqual(expected);
    const count = dataOf<{ viewer: { orders: { totalCount: number } } }>(
      await server.graphql(VIEWER_TOTAL, { filter }, alice),
    );
    expect(count.viewer.orders.totalCount).toBe(expected.length);
  });

  it('non-trivial filters select a proper, non-empty subset', () => {
    for (const [name, , matches] of FILTERS.slice(0, -1)) {
      const selected = alicesOrders.filter(matches).length;
      expect(selected, name).toBeGreaterThan(0);
      expect(selected, name).toBeLessThan(alicesOrders.length);
    }
  });

  it('pages a filtered list with cursors bound to that filter', async () => {
    const filter = { paymentStatus: ['COMPLETED'] };
    const expected = newestFirst(alicesOrders.filter((o) => o.payment_status === 'completed'));
    const first = await myOrders(alice, { first: 3, filter });
    const rest = await myOrders(alice, { first: 100, after: first.orders.pageInfo.endCursor, filter });
    expect([...idsOf(first.orders), ...idsOf(rest.orders)]).toEqual(expected);
    const reply = await server.graphql(
      VIEWER_ORDERS,
      { first: 3, after: first.orders.pageInfo.endCursor },
      alice,
    );
    expect(singleError(reply, 'BAD_USER_INPUT').message).toBe(
      'The after cursor belongs to a different query.',
    );
  });
});

describe('visibility', () => {
  it("never shows Bob Alice's orders, and Alice's cursors are not Bob's", async () => {
    const viewer = await myOrders(bob, { first: 100 });
    expect(viewer.customerId).toBe(FIXTURE_CUSTOMERS.bob);
    expect(idsOf(viewer.orders)).toEqual(newestFirst(ordersOf(FIXTURE_CUSTOMERS.bob)));
    const { orders } = await myOrders(alice, { first: 1 });
    const reply = await server.graphql(VIEWER_ORDERS, { first: 5, after: orders.pageInfo.endCursor }, bob);
    expect(singleError(reply, 'BAD_USER_INPUT').message).toBe(
      'The after cursor belongs to a different query.',
    );
  });

  it('rejects filter.customerId on viewer.orders instead of widening it', async () => {
    for (const customerId of [FIXTURE_CUSTOMERS.bob, FIXTURE_CUSTOMERS.alice]) {
      const reply = await server.graphql(VIEWER_ORDERS, { first: 5, filter: { customerId } }, alice);
      const error = singleError(reply, 'BAD_USER_INPUT');
      expect(error.extensions?.errors).toEqual({
        'filter.customerId': ['The customerId filter is only accepted on orders, not on viewer.orders.'],
      });
      expect(reply.body.data).toEqual({ viewer: null });
    }
  });

  it('keeps node and nodes to the same rule for the orders a connection returned', async () => {
    const bobsOrder = ordersOf(FIXTURE_CUSTOMERS.bob)[0]!;
    const reply = await server.graphql(
      /* GraphQL */ `
        query ($ids: [ID!]!) {
          nodes(ids: $ids) {
            id
          }
        }
      `,
      { ids: [globalId('Order', ALICE_NEWEST_FIRST[0]!), globalId('Order', bobsOrder.id)] },
      alice,
    );
    expect(reply.body.data).toEqual({ nodes: [{ id: globalId('Order', ALICE_NEWEST_FIRST[0]!) }, null] });
    expect(reply.body.errors?.map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
  });
});

describe('orders (support)', () => {
  it('lists every order newest first for orders:read:all, and counts them', async () => {
    const page = await allOrders({ first: 100 });
    expect(idsOf(page)).toEqual(newestFirst(FIXTURE_ORDERS));
    expect(page.totalCount).toBe(FIXTURE_ORDERS.length);
  });

  it("filters by customer, and pages one customer's orders backwards", async () => {
    const expected = newestFirst(ordersOf(FIXTURE_CUSTOMERS.bob));
    const filter = { customerId: FIXTURE_CUSTOMERS.bob };
    expect(idsOf(await allOrders({ first: 100, filter }))).toEqual(expected);
    const last = await allOrders({ last: 2, filter });
    expect(idsOf(last)).toEqual(expected.slice(-2));
    expect(last.totalCount).toBe(expected.length);
    const earlier = await allOrders({ last: 100, before: last.pageInfo.startCursor, filter });
    expect(idsOf(earlier)).toEqual(expected.slice(0, -2));
    expect(idsOf(await allOrders({ first: 5, filter: { customerId: 'cus_nobody' } }))).toEqual([]);
  });

  it('combines a customer with statuses and currency', async () => {
    const filter = { customerId: FIXTURE_CUSTOMERS.alice, paymentStatus: ['PENDING'], currency: 'GBP' };
    const expected = newestFirst(
      alicesOrders.filter((o) => o.payment_status === 'pending' && o.currency === 'GBP'),
    );
    expect(expected.length).toBeGreaterThan(1);
    expect(idsOf(await allOrders({ first: 100, filter }))).toEqual(expected);
  });

  it.each(FILTERS)('filters every order by %s', async (_name, filter, matches) => {
    const page = await allOrders({ first: 100, filter });
    expect(idsOf(page)).toEqual(newestFirst(FIXTURE_ORDERS.filter(matches)));
    expect(page.totalCount).toBe(FIXTURE_ORDERS.filter(matches).length);
  });
});

describe('errors', () => {
  it('answers UNAUTHENTICATED without a token or with a bad one', async () => {
    for (const headers of [{}, { authorization: 'Bearer not.a.token' }] as Record<string, string>[]) {
      const mine = await server.graphql(VIEWER_ORDERS, { first: 1 }, headers);
      expect(singleError(mine, 'UNAUTHENTICATED').path).toEqual(['viewer']);
      expect(mine.body.data).toEqual({ viewer: null });
      const all = await server.graphql(ALL_ORDERS, { first: 1 }, headers);
      singleError(all, 'UNAUTHENTICATED');
      expect(all.body.data).toBeNull();
    }
  });

  it('answers FORBIDDEN to a customer without orders:read:all', async () => {
    const reply = await server.graphql(
      ALL_ORDERS,
      { first: 1, filter: { customerId: FIXTURE_CUSTOMERS.alice } },
      alice,
    );
    expect(singleError(reply, 'FORBIDDEN').message).toBe('This action is unauthorized.');
    const scoped = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice, scope: 'orders:read' }));
    singleError(await server.graphql(ALL_ORDERS, { first: 1 }, scoped), 'FORBIDDEN');
  });

  it.each([
    [{ first: 101 }, { first: ['The first argument must be between 0 and 100.'] }],
    [{ last: -1 }, { last: ['The last argument must be between 0 and 100.'] }],
    [{ first: 1, after: '' }, { after: ['The after cursor is not valid.'] }],
    [{ first: 1, before: 'garbage!' }, { before: ['The before cursor is not valid.'] }],
    [
      { first: 1, filter: { paymentStatus: [] } },
      { 'filter.paymentStatus': ['The paymentStatus filter must not be empty.'] },
    ],
    [
      { first: 1, filter: { currency: 'EURO' } },
      { 'filter.currency': ['The currency filter must be a three-letter currency code.'] },
    ],
    [
      { first: 1, filter: { currency: '{"$ne":1}' } },
      { 'filter.currency': ['The currency filter must be a three-letter currency code.'] },
    ],
    [
      { first: 1, filter: { customerId: 'x'.repeat(256) } },
      { 'filter.customerId': ['The customerId filter must not be longer than 255 characters.'] },
    ],
  ])('rejects %j as BAD_USER_INPUT', async (variables, errors) => {
    const reply = await server.graphql(ALL_ORDERS, variables, support);
    expect(singleError(reply, 'BAD_USER_INPUT').extensions?.errors).toEqual(errors);
  });

  it('rejects a product cursor and a bad timestamp', async () => {
    const products = dataOf<{ products: { pageInfo: { endCursor: string } } }>(
      await server.graphql('{ products(first: 1) { pageInfo { endCursor } } }'),
    );
    const reply = await server.graphql(
      VIEWER_ORDERS,
      { first: 1, after: products.products.pageInfo.endCursor },
      alice,
    );
    singleError(reply, 'BAD_USER_INPUT');
    const late = await server.graphql(
      VIEWER_ORDERS,
      { first: 1, filter: { createdAfter: 'yesterday' } },
      alice,
    );
    expect(late.status).toBe(200);
    expect(late.body.errors?.[0]?.message).toContain('DateTime');
  });

  it('treats far-away dates as plain bounds', async () => {
    const far = await myOrders(alice, { first: 5, filter: { createdAfter: '9999-12-31T23:59:59Z' } });
    expect(idsOf(far.orders)).toEqual([]);
    const old = await myOrders(alice, { first: 100, filter: { createdAfter: '1900-01-01T00:00:00Z' } });
    expect(idsOf(old.orders)).toEqual(ALICE_NEWEST_FIRST);
  });
});

describe('cost', () => {
  const FULL_PAGE = `orders(first: 100) { totalCount edges { cursor node { id databaseId ulid orderNumber
    fulfillmentStatus paymentStatus currency createdAt updatedAt subtotal { amount currency formatted }
    conversionFees { amount currency formatted } total { amount currency formatted }
    items { id databaseId productName variantName quantity createdAt updatedAt
      unitPrice { amount currency formatted } totalPrice { amount currency formatted } } } }
    pageInfo { hasNextPage endCursor } }`;

  it('accepts a full page of 100 orders with every field, and costs order pages by their size', async () => {
    expect((await server.graphql(`{ viewer { ${FULL_PAGE} } }`, {}, alice)).body.errors).toBeUndefined();
    expect((await server.graphql(`{ ${FULL_PAGE} }`, {}, support)).body.errors).toBeUndefined();
    const pages = Array.from({ length: 8 }, (_, index) => `p${index}: ${FULL_PAGE}`).join(' ');
    const costly = await server.graphql(`{ viewer { ${pages} } }`, {}, alice);
    expect(costly.body.errors?.[0]?.message).toMatch(/cost limit of 150000 exceeded/i);
    const small = pages.replaceAll('first: 100', 'first: 5');
    expect((await server.graphql(`{ viewer { ${small} } }`, {}, alice)).body.errors).toBeUndefined();
  });
});
