import type { CommandStartedEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBackgroundCommand } from '../support/background-commands';
import type { ProductDoc } from '../../src/db/documents';
import { productRecord } from '../../src/db/records';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { ORDER_FIELDS, PRODUCT_FIELDS, dataOf, globalId } from './helpers';

/**
 * N+1 freedom, counted through the driver's command monitoring: a page of products, a search or
 * an order with its items costs a constant number of database commands whatever the page size,
 * and connection paging is keyset paging (sorted on _id, the id, limited, no skip).
 *
 * `measure` files each command as a read ('find': a find, or an aggregation that returns rows,
 * normalised to a find's filter/sort/skip/limit) or a 'count' (count, countDocuments, $group).
 */

const EXTRA_PRODUCTS = 120;
/** Driver housekeeping, not data access. */
const HOUSEKEEPING = new Set([
  'hello',
  'isMaster',
  'ismaster',
  'ping',
  'endSessions',
  'buildInfo',
  'saslStart',
  'saslContinue',
]);

let server: TestServer;
let commands: CommandStartedEvent[] = [];
let admin: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  const [template] = FIXTURE_PRODUCTS;
  const extra: ProductDoc[] = Array.from({ length: EXTRA_PRODUCTS }, (_, index) => {
    const id = 21 + index;
    const copy = structuredClone(template!);
    return {
      ...copy,
      id,
      name: `Generated Product ${id}`,
      variant: { ...copy.variant, id: 1000 + id },
    };
  });
  await server.testDb.db.collection<ProductDoc>('products').insertMany(extra.map(productRecord));
  admin = bearer(await mintToken({ sub: 'support_agent', scope: 'orders:read:all' }));
  server.database.client.on('commandStarted', (event) => {
    const probe = isBackgroundCommand(event.command);
    if (event.databaseName === server.testDb.dbName && !HOUSEKEEPING.has(event.commandName) && !probe)
      commands.push(event);
  });
});
afterAll(() => server.stop());

interface Measured {
  names: string[];
  finds: Document[];
  /** Every command, in order. */
  all: Document[];
  data: Record<string, unknown>;
}

/** Runs one GraphQL request and returns the database commands it caused. */
async function measure(
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Measured> {
  commands = [];
  const data = dataOf(await server.graphql(query, variables, headers));
  const seen = commands;
  commands = [];
  const reads = seen.map((event) => asRead(event.command));
  return {
    names: reads.map((read) => (read === undefined ? 'count' : 'find')),
    finds: reads.filter((read): read is Document => read !== undefined),
    all: seen.map((event) => event.command),
    data,
  };
}

/** A find as it is, an aggregation that returns rows as the find it stands for; undefined for counts. */
function asRead(command: Document): Document | undefined {
  if (command.find !== undefined) return command;
  if (command.aggregate === undefined) return undefined;
  const stages = command.pipeline as Document[];
  if (stages.some((stage) => '$group' in stage)) return undefined;
  const matches = stages.filter((stage) => '$match' in stage).map((stage) => stage.$match as Document);
  const limits = stages.filter((stage) => '$limit' in stage).map((stage) => stage.$limit as number);
  return {
    filter: matches.length === 1 ? matches[0] : { $and: matches },
    sort: stages.find((stage) => '$sort' in stage)?.$sort,
    skip: stages.find((stage) => '$skip' in stage)?.$skip,
    limit: limits.at(-1),
  };
}

/** The driver hands the sort over as a Map. */
function sortOf(find: Document | undefined): unknown {
  const sort: unknown = find?.sort;
  return sort instanceof Map ? Object.fromEntries(sort) : sort;
}

/** Every value under `key` anywhere in a filter document. */
function valuesAt(filter: unknown, key: string): unknown[] {
  if (Array.isArray(filter)) return filter.flatMap((entry) => valuesAt(entry, key));
  if (filter === null || typeof filter !== 'object') return [];
  return Object.entries(filter).flatMap(([name, value]) => [
    ...(name === key ? [value] : []),
    ...valuesAt(value, key),
  ]);
}

const PAGE_OF_PRODUCTS = (withTotal: boolean) => /* GraphQL */ `
  query ($first: Int, $last: Int, $after: String, $before: String, $search: String, $category: String) {
    products(first: $first, last: $last, after: $after, before: $before, search: $search, category: $category) {
      ${withTotal ? 'totalCount' : ''}
      edges { cursor node { ...AllProductFields } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
  ${PRODUCT_FIELDS}
`;

const SEARCH_PAGE = /* GraphQL */ `
  query ($term: String!, $first: Int, $after: String) {
    searchProducts(term: $term, first: $first, after: $after) {
      totalCount
      edges {
        cursor
        node {
          ...AllProductFields
        }
      }
    }
  }
  ${PRODUCT_FIELDS}
`;

interface Edges {
  edges: { cursor: string; node: { databaseId: number } }[];
}

describe('connections', () => {
  it('has the extra products to page through', async () => {
    const { data } = await measure(PAGE_OF_PRODUCTS(true), { first: 1 });
    expect((data.products as { totalCount: number }).totalCount).toBe(20 + EXTRA_PRODUCTS);
  });

  it('costs one find for products(first: 5) and for products(first: 50), none per product', async () => {
    const five = await measure(PAGE_OF_PRODUCTS(false), { first: 5 });
    const fifty = await measure(PAGE_OF_PRODUCTS(false), { first: 50 });
    const hundred = await measure(PAGE_OF_PRODUCTS(false), { first: 100 });
    expect((five.data.products as Edges).edges).toHaveLength(5);
    expect((fifty.data.products as Edges).edges).toHaveLength(50);
    expect((hundred.data.products as Edges).edges).toHaveLength(100);
    expect(five.names).toEqual(['find']);
    expect(fifty.names).toEqual(['find']);
    expect(hundred.names).toEqual(['find']);
  });

  it('adds exactly one count when totalCount is asked, whatever the size, and reuses it for the filter', async () => {
    const five = await measure(PAGE_OF_PRODUCTS(true), { first: 5, category: 'software' });
    const fifty = await measure(PAGE_OF_PRODUCTS(true), { first: 50, category: 'software' });
    // The first ask of a category also looks its key up once (src/db/catalog/category-probe.ts).
    expect(five.names.sort()).toEqual(['count', 'find', 'find']);
    // The filter's total is kept until the change feed reports a change (src/db/catalog/total-cache.ts).
    expect(fifty.names).toEqual(['find']);
  });

  it('pages forwards with a sorted, limited find and an $gt keyset filter, never skip', async () => {
    const first = await measure(PAGE_OF_PRODUCTS(false), { first: 5 });
    const [firstFind] = first.finds;
    expect(sortOf(firstFind)).toEqual({ _id: 1 });
    expect(firstFind?.limit).toBe(6); // one extra row tells whether there is a next page
    expect(firstFind?.skip ?? 0).toBe(0);
    expect(valuesAt(firstFind?.filter, '_id')).toEqual([]);

    const endCursor = (first.data.products as Edges).edges.at(-1)!.cursor;
    const next = await measure(PAGE_OF_PRODUCTS(false), { first: 50, after: endCursor });
    const [nextFind] = next.finds;
    expect(next.names).toEqual(['find']);
    expect(sortOf(nextFind)).toEqual({ _id: 1 });
    expect(nextFind?.limit).toBe(51);
    expect(nextFind?.skip ?? 0).toBe(0);
    expect(valuesAt(nextFind?.filter, '_id')).toEqual([{ $gt: 5 }]);
    expect((next.data.products as Edges).edges.map((edge) => edge.node.databaseId)).toEqual(
      Array.from({ length: 50 }, (_, index) => 6 + index),
    );
  });

  it('pages backwards with a descending sort and an $lt keyset filter', async () => {
    const last = await measure(PAGE_OF_PRODUCTS(false), { last: 5 });
    const [lastFind] = last.finds;
    expect(last.names).toEqual(['find']);
    expect(sortOf(lastFind)).toEqual({ _id: -1 });
    expect(lastFind?.limit).toBe(6);
    expect(lastFind?.skip ?? 0).toBe(0);
    const startCursor = (last.data.products as Edges).edges[0]!.cursor;
    expect((last.data.products as Edges).edges.map((edge) => edge.node.databaseId)).toEqual([
      136, 137, 138, 139, 140,
    ]);

    const before = await measure(PAGE_OF_PRODUCTS(false), { last: 50, before: startCursor });
    const [beforeFind] = before.finds;
    expect(sortOf(beforeFind)).toEqual({ _id: -1 });
    expect(beforeFind?.limit).toBe(51);
    expect(beforeFind?.skip ?? 0).toBe(0);
    expect(valuesAt(beforeFind?.filter, '_id')).toEqual([{ $lt: 136 }]);
  });

  it('bounds a window on both sides in one find', async () => {
    const all = await measure(PAGE_OF_PRODUCTS(false), { first: 20 });
    const cursors = (all.data.products as Edges).edges.map((edge) => edge.cursor);
    const window = await measure(PAGE_OF_PRODUCTS(false), {
      first: 5,
      after: cursors[2],
      before: cursors[15],
    });
    expect(window.names).toEqual(['find']);
    expect(valuesAt(window.finds[0]?.filter, '_id')).toEqual([{ $gt: 3, $lt: 16 }]);
  });

  it('costs the same for a filtered search page of 5 and of 50', async () => {
    const five = await measure(SEARCH_PAGE, { term: 'northwind', first: 5 });
    const fifty = await measure(SEARCH_PAGE, { term: 'northwind', first: 50 });
    expect((fifty.data.searchProducts as Edges).edges).toHaveLength(50);
    // A word this dense fills the window in the walk of the primary key (src/db/catalog/product-search.ts),
    // one aggregation, and totalCount is one more (on the gateway's search projection).
    expect(five.all.map((command) => command.aggregate)).toEqual(['products', SEARCH_PROJECTION_COLLECTION]);
    // The total counted for the first page is reused.
    expect(fifty.all.map((command) => command.aggregate)).toEqual(['products']);
    const walk = fifty.all[0]!.pipeline as Document[];
    expect(valuesAt(walk, '$regex')).not.toEqual([]);
    expect(valuesAt(walk, '$limit').at(-1)).toBe(51);
    expect(valuesAt(walk, '$skip')).toEqual([]);

    const after = (fifty.data.searchProducts as Edges).edges.at(-1)!.cursor;
    const next = await measure(SEARCH_PAGE, { term: 'northwind', first: 50, after });
    expect(next.all).toHaveLength(1);
    expect(valuesAt(next.all[0]!.pipeline, '_id')).toContainEqual({
      $gt: (fifty.data.searchProducts as Edges).edges.at(-1)!.node.databaseId,
    });
    expect(valuesAt(next.all[0]!.pipeline, '$skip')).toEqual([]);
  });

  it('costs the same for a category page of 5 and of 50', async () => {
    const five = await measure(PAGE_OF_PRODUCTS(true), { first: 5, category: 'gift cards' });
    const fifty = await measure(PAGE_OF_PRODUCTS(true), { first: 50, category: 'gift cards' });
    expect((fifty.data.products as Edges).edges).toHaveLength(50);
    // The first ask of a category also looks its key up once (src/db/catalog/category-probe.ts).
    expect(five.names.sort()).toEqual(['count', 'find', 'find']);
    expect(fifty.names).toEqual(['find']);
  });
});

describe('numbered pages', () => {
  const PRODUCT_PAGE = /* GraphQL */ `
    query ($page: Int, $perPage: Int, $search: String) {
      productPage(page: $page, perPage: $perPage, search: $search) {
        items {
          ...AllProductFields
        }
        currentPage
        perPage
        total
        lastPage
        from
        to
      }
    }
    ${PRODUCT_FIELDS}
  `;

  it('costs one find for a full page of 5 and of 50, and one count per filter', async () => {
    const five = await measure(PRODUCT_PAGE, { perPage: 5, search: 'card' });
    const fifty = await measure(PRODUCT_PAGE, { perPage: 50, page: 2 });
    expect((fifty.data.productPage as { items: unknown[] }).items).toHaveLength(50);
    expect(five.names.sort()).toEqual(['count', 'find']);
    // The catalogue's total was counted above and is reused.
    expect(fifty.names).toEqual(['find']);
    expect(sortOf(fifty.finds[0])).toEqual({ _id: 1 });
    expect(fifty.finds[0]?.limit).toBe(50);
    expect(fifty.finds[0]?.skip).toBe(50);
  });

  it('saves the count on a partial last page', async () => {
    const last = await measure(PRODUCT_PAGE, { perPage: 50, page: 3 });
    expect((last.data.productPage as { items: unknown[]; total: number }).items).toHaveLength(40);
    expect((last.data.productPage as { total: number }).total).toBe(140);
    expect(last.names).toEqual(['find']);
  });

  it('costs the same for searchProductPage of 5 and of 50', async () => {
    const query = `query ($perPage: Int, $term: String!) { searchProductPage(term: $term, perPage: $perPage) { items { ...AllProductFields } total } } ${PRODUCT_FIELDS}`;
    const five = await measure(query, { perPage: 5, term: 'market' });
    const fifty = await measure(query, { perPage: 50, term: 'market gift' });
    expect(five.names.sort()).toEqual(['count', 'find']);
    expect(fifty.names.sort()).toEqual(['count', 'find']);
  });
});

describe('orders and nodes', () => {
  it('costs one find for an order with all its items', async () => {
    const three = await measure(
      `{ order(ulid: "01KFBPVG1VM8TD2QXN7C4WKB6S") { ...AllOrderFields } } ${ORDER_FIELDS}`,
      {},
      admin,
    );
    expect((three.data.order as { items: unknown[] }).items).toHaveLength(3);
    expect(three.names).toEqual(['find']);
    const one = await measure(
      `{ order(ulid: "01KKNTQ1X0H6PV9K3JGA5YE2RF") { ...AllOrderFields } } ${ORDER_FIELDS}`,
      {},
      admin,
    );
    expect(one.names).toEqual(['find']);
  });

  it('costs one find for an order node with its items', async () => {
    const reply = await measure(
      `query ($id: ID!) { node(id: $id) { ...AllOrderFields } } ${ORDER_FIELDS}`,
      { id: globalId('Order', 8) },
      admin,
    );
    expect(reply.names).toEqual(['find']);
  });

  it('costs one find for nodes() of 10 products, as for 2', async () => {
    const NODES = `query ($ids: [ID!]!) { nodes(ids: $ids) { ...AllProductFields } } ${PRODUCT_FIELDS}`;
    const ten = await measure(NODES, {
      ids: [3, 1, 4, 15, 9, 26, 5, 35, 89, 140].map((id) => globalId('Product', id)),
    });
    expect((ten.data.nodes as { databaseId: number }[]).map((node) => node.databaseId)).toEqual([
      3, 1, 4, 15, 9, 26, 5, 35, 89, 140,
    ]);
    expect(ten.names).toEqual(['find']);
    expect(valuesAt(ten.finds[0]?.filter, '_id')).toEqual([{ $in: [3, 1, 4, 15, 9, 26, 5, 35, 89, 140] }]);
    const two = await measure(NODES, { ids: [globalId('Product', 1), globalId('Product', 2)] });
    expect(two.names).toEqual(['find']);
  });

  it('costs one find per node type in a mixed nodes() call', async () => {
    const ids = [
      ...FIXTURE_ORDERS.slice(0, 5).map((order) => globalId('Order', order.id)),
      ...FIXTURE_ORDERS.slice(0, 5).map((order) => globalId('OrderItem', order.items[0]!.id)),
      ...[1, 2, 3, 4, 5].map((id) => globalId('Product', id)),
      ...[1001, 1002, 1003].map((id) => globalId('Variant', id)),
    ];
    const reply = await measure(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids }, admin);
    expect((reply.data.nodes as unknown[]).every((node) => node !== null)).toBe(true);
    expect(reply.names).toEqual(['find', 'find', 'find', 'find']);
  });

  it('fetches a product node once however often it is asked for', async () => {
    const reply = await measure(
      `query ($id: ID!) { a: node(id: $id) { id } b: node(id: $id) { id } c: nodes(ids: [$id, $id]) { id } }`,
      { id: globalId('Product', 7) },
    );
    expect(reply.names).toEqual(['find']);
  });
});

describe('order lists', () => {
  const MY_ORDERS = (withTotal: boolean) => /* GraphQL */ `
    query ($first: Int, $after: String, $filter: OrderFilter) {
      viewer {
        orders(first: $first, after: $after, filter: $filter) {
          ${withTotal ? 'totalCount' : ''}
          edges { node { ...AllOrderFields } }
          pageInfo { hasNextPage endCursor }
        }
      }
    }
    ${ORDER_FIELDS}
  `;
  interface MyOrders {
    viewer: {
      orders: {
        edges: { node: { items: unknown[] } }[];
        pageInfo: { hasNextPage: boolean; endCursor: string };
      };
    };
  }
  let alice: Record<string, string>;
  beforeAll(async () => {
    alice = bearer(await mintToken({ sub: 'cus_alice' }));
  });

  it('costs one read per page of viewer.orders with every field and item, whatever the page size', async () => {
    const alicesOrders = FIXTURE_ORDERS.filter((order) => order.customer_id === 'cus_alice');
    for (const first of [1, 5, 20]) {
      const page = await measure(MY_ORDERS(false), { first }, alice);
      const edges = (page.data as unknown as MyOrders).viewer.orders.edges;
      expect(edges).toHaveLength(Math.min(first, alicesOrders.length));
      // The bounded walk of the newest orders; a second read (the customer's index) only when the
      // walk cannot fill the window, as for first: 20 of alice's 13 (src/db/orders/order-repository.ts).
      expect(page.names).toEqual(first + 1 <= alicesOrders.length ? ['find'] : ['find', 'find']);
      expect(page.finds.every((read) => read.limit === first + 1)).toBe(true);
    }
  });

  it('walks every page with one find each, and adds one count for totalCount', async () => {
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page = await measure(MY_ORDERS(pages === 0), { first: 4, after }, alice);
      const reads = page.names.filter((name) => name === 'find').length;
      expect(page.names.filter((name) => name === 'count')).toHaveLength(pages === 0 ? 1 : 0);
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(reads).toBeLessThanOrEqual(2);
      pages += 1;
      const { pageInfo } = (page.data as unknown as MyOrders).viewer.orders;
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    expect(pages).toBe(Math.ceil(FIXTURE_ORDERS.filter((o) => o.customer_id === 'cus_alice').length / 4));
  });

  it('costs at most two reads for a filtered support page of every order with its items', async () => {
    const query = /* GraphQL */ `
      query ($filter: OrderFilter) {
        orders(first: 20, filter: $filter) {
          edges {
            node {
              ...AllOrderFields
            }
          }
        }
      }
      ${ORDER_FIELDS}
    `;
    const all = await measure(query, {}, admin);
    expect((all.data.orders as { edges: unknown[] }).edges).toHaveLength(FIXTURE_ORDERS.length);
    expect(all.names).toEqual(['find']);
    const filtered = await measure(query, { filter: { paymentStatus: ['PENDING'], currency: 'GBP' } }, admin);
    expect(filtered.names.length).toBeGreaterThanOrEqual(1);
    expect(filtered.names.length).toBeLessThanOrEqual(2);
    expect(new Set(filtered.names)).toEqual(new Set(['find']));
  });

  it('costs one aggregation each for categories and brands', async () => {
    const reply = await measure('{ categories { name productCount } brands { id name productCount } }');
    // `measure` files a $group under count; no read, nothing per row.
    expect(reply.names).toEqual(['count', 'count']);
    expect(reply.finds).toEqual([]);
  });
});
