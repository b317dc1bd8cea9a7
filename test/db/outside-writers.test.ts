import { Decimal128, ObjectId, type Document } from 'mongodb';
import { decodeTime, ulid as mintUlid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOREIGN_RECHECK_MS } from '../../src/db/foreign-keys';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { capturedLog } from '../support/captured-log';
import { openOutsideWriter, type OutsideWriter } from '../support/outside-writer';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { dataOf, globalId } from '../graphql/helpers';

/**
 * Issue 26, rows 4 and 5: documents another application writes are served like the gateway's
 * own. The outside writer below uses only the plain driver: default ObjectId `_id`s (and a string
 * and a numeric one), laravel-mongodb's value shapes (`"2026-11-25 17:00:00"`, `null` lists,
 * amounts as decimal strings or Decimal128), and a `$set` on one of the gateway's own products.
 * Every answer over HTTP is compared with what the test computes from the raw collections.
 */

let server: TestServer;
let writer: OutsideWriter;
let alice: Record<string, string>;
const log = capturedLog();

/** The product and the order made unreadable on purpose: each must affect itself alone. */
const UNREADABLE_PRODUCT = 23;
const UNREADABLE_ORDER_ID = 9003;

const laravelProduct = (id: number, name: string, extra: Document = {}): Document => {
  const template = FIXTURE_PRODUCTS[0]!;
  return {
    id,
    name,
    url: `https://store.example.com/products/${id}`,
    description: `${name}, written by the back office.`,
    short_description: name,
    notes: null,
    category_name: template.category_name,
    category_key: template.category_key,
    brand_name: template.brand_name,
    brand_id: template.brand_id,
    images: null,
    region: 'US',
    channel: 'API',
    tags: null,
    is_permanent_out_of_stock: 0,
    discount_percentage: '5',
    variant: {
      id: 5000 + id,
      name: '12.50 USD',
      price: { amount: '12.50', currency: 'usd' },
      face_value: { amount: Decimal128.fromString('15.00'), currency: 'USD' },
    },
    created_at: '2026-11-20 09:30:00',
    updated_at: '2026-11-25 17:00:00',
    ...extra,
  };
};

const at = (iso: string) => mintUlid(Date.parse(iso));
const NEWEST = at('2026-11-25T17:00:00Z');
const MIDDLE = at('2026-02-01T12:00:00Z');
const NUMERIC_KEYED = at('2026-03-01T08:00:00Z');
const UNREADABLE_ULID = at('2026-11-24T10:00:00Z');

const laravelOrder = (id: number, ulid: string, extra: Document = {}): Document => {
  const created = new Date(decodeTime(ulid)).toISOString().slice(0, 19).replace('T', ' ');
  return {
    id,
    ulid,
    order_number: `ORD-LARAVEL-${id}`,
    customer_id: FIXTURE_CUSTOMERS.alice,
    fulfillment_status: 'completed',
    payment_status: 'completed',
    currency: 'USD',
    subtotal: '25.00',
    conversion_fees: '0',
    total: Decimal128.fromString('25.00'),
    items: [
      {
        id: id * 10,
        product_name: 'Gift',
        variant_name: '25 USD',
        quantity: '1',
        unit_price: '25.00',
        total_price: '25.00',
        created_at: created,
        updated_at: created,
      },
    ],
    created_at: created,
    updated_at: created,
    ...extra,
  };
};

beforeAll(async () => {
  server = await startTestServer({ logger: log.logger, env: { METRICS: 'on' } });
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
  alice = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
  // The back office rewrote product 10 (delete, insert: a new ObjectId), added four, and saved
  // product 3 through Laravel ($set of two fields and updated_at).
  await writer.products.deleteOne({ id: 10 });
  await writer.products.insertMany([
    laravelProduct(10, 'Laravel Rewritten Ten'),
    laravelProduct(21, 'Laravel Epoch Card', { created_at: 1_763_000_000, updated_at: 1_764_090_000_000 }),
    laravelProduct(22, 'Laravel Iso Card', { created_at: '2026-11-20T09:30:00+01:00', tags: ['gift'] }),
    laravelProduct(UNREADABLE_PRODUCT, 'Laravel Broken Card', {
      variant: { id: 5023, name: 'x', price: { amount: 'twelve', currency: 'USD' } },
    }),
  ]);
  await writer.products.insertOne({
    _id: 'b3a1c2d4-uuid-key' as unknown as ObjectId,
    ...laravelProduct(24, 'Laravel Uuid Card'),
  });
  await writer.products.updateOne(
    { id: 3 },
    { $set: { tags: null, images: null, updated_at: '2026-11-25 17:00:00' } },
  );
  await writer.orders.insertMany([
    laravelOrder(9001, NEWEST),
    laravelOrder(9002, MIDDLE),
    laravelOrder(UNREADABLE_ORDER_ID, UNREADABLE_ULID, { payment_status: 'paid-ish' }),
  ]);
  await writer.orders.insertOne({ _id: 9004 as unknown as ObjectId, ...laravelOrder(9004, NUMERIC_KEYED) });
  // Lists see other writers' keys from the probe's next look (lookups see them at once).
  await new Promise((resolve) => setTimeout(resolve, FOREIGN_RECHECK_MS + 200));
});

afterAll(async () => {
  await writer?.close();
  await server?.stop();
});

/** Every product id as stored, ascending, but the one made unreadable: computed from the raw collection. */
async function readableProductIds(): Promise<number[]> {
  const ids = (await writer.products.find({}, { projection: { id: 1 } }).toArray()).map(
    (doc) => doc.id as number,
  );
  return ids.filter((id) => id !== UNREADABLE_PRODUCT).sort((a, b) => a - b);
}

async function aliceUlidsNewestFirst(): Promise<string[]> {
  const rows = await writer.orders.find({ customer_id: FIXTURE_CUSTOMERS.alice }).toArray();
  return rows
    .filter((doc) => doc.id !== UNREADABLE_ORDER_ID)
    .map((doc) => doc.ulid as string)
    .sort()
    .reverse();
}

interface RestPage {
  data: { id: number; [field: string]: unknown }[];
  meta: { total: number; last_page: number };
}

async function restPage(query: string): Promise<{ status: number; body: RestPage }> {
  const response = await server.request(`/api/v1/products?${query}`);
  return { status: response.status, body: (await response.json()) as RestPage };
}

describe('REST pages over products other writers made', () => {
  it('serve every page (no 500), the items in id order, the unreadable one left out of its page only', async () => {
    const expected = await readableProductIds();
    const stored = await writer.products.countDocuments();
    const seen: number[] = [];
    for (let page = 1; page <= Math.ceil(stored / 5); page++) {
      const reply = await restPage(`per_page=5&page=${page}`);
      expect(reply.status, `page ${page}`).toBe(200);
      expect(reply.body.meta.total).toBe(stored);
      seen.push(...reply.body.data.map((product) => product.id));
    }
    expect(seen).toEqual(expected);
    const all = await restPage('per_page=100');
    expect(all.status).toBe(200);
    expect(all.body.data.map((product) => product.id)).toEqual(expected);
  });

  it('read the Laravel shapes by the table: decimal strings, Decimal128, null lists, string and epoch dates', async () => {
    const { body } = await restPage('per_page=100');
    const byId = new Map(body.data.map((product) => [product.id, product]));
    expect(byId.get(10)).toMatchObject({
      name: 'Laravel Rewritten Ten',
      images: [],
      tags: [],
      isPermanentOutOfStock: false,
      discount_percentage: 5,
      created_at: '2026-11-20T09:30:00+00:00',
      updated_at: '2026-11-25T17:00:00+00:00',
      variant: {
        id: 5010,
        price: { amount: '1250', currency: 'USD', decimal: '12.50' },
        face_value: { amount: '1500', currency: 'USD', decimal: '15.00' },
      },
    });
    expect(byId.get(21)).toMatchObject({
      created_at: new Date(1_763_000_000 * 1000).toISOString().slice(0, 19) + '+00:00',
      updated_at: new Date(1_764_090_000_000).toISOString().slice(0, 19) + '+00:00',
    });
    expect(byId.get(22)).toMatchObject({ created_at: '2026-11-20T08:30:00+00:00', tags: ['gift'] });
    expect(byId.get(3)).toMatchObject({ tags: [], images: [], updated_at: '2026-11-25T17:00:00+00:00' });
  });

  it('page a category holding both kinds in id order, at every page size', async () => {
    const category = FIXTURE_PRODUCTS[0]!.category_name;
    const expected = (
      await writer.products
        .find({ category_key: category.toLowerCase() }, { projection: { id: 1 } })
        .toArray()
    )
      .map((doc) => doc.id as number)
      .filter((id) => id !== UNREADABLE_PRODUCT)
      .sort((a, b) => a - b);
    expect(expected).toEqual(expect.arrayContaining([10, 21, 22, 24]));
    for (const perPage of [2, 3, 5]) {
      const seen: number[] = [];
      for (let page = 1; page <= 20; page++) {
        const reply = await restPage(
          `category=${encodeURIComponent(category)}&per_page=${perPage}&page=${page}`,
        );
        expect(reply.status).toBe(200);
        seen.push(...reply.body.data.map((product) => product.id));
        if (page >= reply.body.meta.last_page) break;
      }
      expect(seen, `per_page ${perPage}`).toEqual(expected);
    }
  });

  it('find them by search, in id order', async () => {
    const response = await server.request('/api/v1/products/search?term=laravel&per_page=100');
    expect(response.status).toBe(200);
    const body = (await response.json()) as RestPage;
    expect(body.data.map((product) => product.id)).toEqual([10, 21, 22, 24]);
    expect(body.meta.total).toBe(5);
  });
});

const PRODUCTS_WINDOW = /* GraphQL */ `
  query Window($first: Int, $after: String, $last: Int, $before: String) {
    products(first: $first, after: $after, last: $last, before: $before) {
      totalCount
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
      edges {
        node {
          databaseId
        }
      }
    }
  }
`;

interface Window {
  products: {
    totalCount: number;
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
    edges: { node: { databaseId: number } }[];
  };
}

interface Connection<Node> {
  pageInfo: { hasNextPage?: boolean; hasPreviousPage?: boolean; startCursor?: string; endCursor?: string };
  edges: { node: Node }[];
}

/**
 * Every node of a connection in list order, read window by window: forwards after each
 * `endCursor`, or backwards before each `startCursor` (at most `rounds` windows).
 */
async function walkConnection<Node>(
  direction: 'forwards' | 'backwards',
  windowAt: (cursor: string | undefined) => Promise<Connection<Node>>,
  rounds = 30,
): Promise<Node[]> {
  const nodes: Node[] = [];
  let cursor: string | undefined;
  for (let round = 0; round < rounds; round++) {
    const { pageInfo, edges } = await windowAt(cursor);
    const window = edges.map((edge) => edge.node);
    if (direction === 'forwards') nodes.push(...window);
    else nodes.unshift(...window);
    if (!(direction === 'forwards' ? pageInfo.hasNextPage : pageInfo.hasPreviousPage)) break;
    cursor = direction === 'forwards' ? pageInfo.endCursor : pageInfo.startCursor;
  }
  return nodes;
}

describe('GraphQL over products other writers made', () => {
  it('pages forwards through every product in id order, totalCount counting each stored one', async () => {
    const expected = await readableProductIds();
    const seen = await walkConnection('forwards', async (after) => {
      const { products } = dataOf<Window>(await server.graphql(PRODUCTS_WINDOW, { first: 4, after }));
      expect(products.totalCount).toBe(await writer.products.countDocuments());
      return products;
    });
    expect(seen.map((node) => node.databaseId)).toEqual(expected);
  });

  it('pages forwards through a search, in id order', async () => {
    const query = /* GraphQL */ `
      query Search($after: String) {
        searchProducts(term: "card", first: 2, after: $after) {
          pageInfo {
            hasNextPage
            endCursor
          }
          edges {
            node {
              databaseId
            }
          }
        }
      }
    `;
    const expected = (await writer.products.find({}).toArray())
      .filter((doc) => doc.id !== UNREADABLE_PRODUCT)
      .filter((doc) =>
        [
          doc.name,
          doc.short_description,
          doc.brand_name,
          doc.category_name,
          ...((doc.tags as string[]) ?? []),
        ].some((text) => typeof text === 'string' && /card/i.test(text)),
      )
      .map((doc) => doc.id as number)
      .sort((a, b) => a - b);
    expect(expected).toEqual(expect.arrayContaining([10, 21, 22, 24]));
    type Search = { searchProducts: Window['products'] };
    const seen = await walkConnection(
      'forwards',
      async (after) => dataOf<Search>(await server.graphql(query, { after })).searchProducts,
    );
    expect(seen.map((node) => node.databaseId)).toEqual(expected);
  });

  it('pages backwards through every product, the same ids', async () => {
    const expected = await readableProductIds();
    const seen = await walkConnection(
      'backwards',
      async (before) => dataOf<Window>(await server.graphql(PRODUCTS_WINDOW, { last: 4, before })).products,
    );
    expect(seen.map((node) => node.databaseId)).toEqual(expected);
  });

  it('finds them by node id; the unreadable one is null', async () => {
    const reply = dataOf<{ nodes: ({ databaseId: number; name: string } | null)[] }>(
      await server.graphql(
        `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Product { databaseId name } } }`,
        { ids: [10, 24, 3, UNREADABLE_PRODUCT].map((id) => globalId('Product', id)) },
      ),
    );
    expect(reply.nodes).toEqual([
      { databaseId: 10, name: 'Laravel Rewritten Ten' },
      { databaseId: 24, name: 'Laravel Uuid Card' },
      { databaseId: 3, name: FIXTURE_PRODUCTS[2]!.name },
      null,
    ]);
  });

  it('serves productPage without an error', async () => {
    const reply = dataOf<{ productPage: { total: number; items: { databaseId: number }[] } }>(
      await server.graphql(`{ productPage(perPage: 100) { total items { databaseId } } }`),
    );
    expect(reply.productPage.items.map((item) => item.databaseId)).toEqual(await readableProductIds());
  });
});

describe('orders other writers made', () => {
  it('are found by ULID over REST and GraphQL, amounts read from decimal strings', async () => {
    for (const ulid of [NEWEST, MIDDLE, NUMERIC_KEYED]) {
      const response = await server.request(`/api/v1/orders/${ulid}`, { headers: alice });
      expect(response.status, ulid).toBe(200);
      expect(await response.json()).toMatchObject({ ulid, total: { amount: 25 } });
      const reply = dataOf<{ order: { ulid: string } }>(
        await server.graphql(`query($u: ID!) { order(ulid: $u) { ulid } }`, { u: ulid }, alice),
      );
      expect(reply.order.ulid).toBe(ulid);
    }
    expect((await server.request(`/api/v1/orders/${UNREADABLE_ULID}`, { headers: alice })).status).toBe(404);
  });

  it('take their place in viewer.orders by ULID, newest first, both ways', async () => {
    const expected = await aliceUlidsNewestFirst();
    const query = /* GraphQL */ `
      query ($first: Int, $after: String, $last: Int, $before: String) {
        viewer {
          orders(first: $first, after: $after, last: $last, before: $before) {
            pageInfo {
              hasNextPage
              hasPreviousPage
              startCursor
              endCursor
            }
            edges {
              node {
                ulid
              }
            }
          }
        }
      }
    `;
    type Orders = {
      viewer: {
        orders: {
          pageInfo: {
            hasNextPage: boolean;
            hasPreviousPage: boolean;
            startCursor: string;
            endCursor: string;
          };
          edges: { node: { ulid: string } }[];
        };
      };
    };
    const ordersAt = async (variables: Record<string, unknown>) =>
      dataOf<Orders>(await server.graphql(query, variables, alice)).viewer.orders;
    const forwards = await walkConnection('forwards', (after) => ordersAt({ first: 2, after }), 10);
    expect(forwards.map((node) => node.ulid)).toEqual(expected);
    const backwards = await walkConnection('backwards', (before) => ordersAt({ last: 2, before }), 10);
    expect(backwards.map((node) => node.ulid)).toEqual(expected);
    expect(expected.length).toBe(
      FIXTURE_ORDERS.filter((o) => o.customer_id === FIXTURE_CUSTOMERS.alice).length + 3,
    );
  });
});

describe('a document that cannot be read', () => {
  it('is logged once with its key and counted', async () => {
    const lines = log.lines.filter((line) => line.msg === 'stored document left out: it cannot be read');
    expect(lines.map((line) => line.key)).toContain(`id=${UNREADABLE_PRODUCT}`);
    expect(lines.filter((line) => line.key === `id=${UNREADABLE_PRODUCT}`)).toHaveLength(1);
    const metrics = await (await server.request('/metrics')).text();
    const counted = /documents_unreadable_total\{collection="products"\} (\d+)/.exec(metrics);
    expect(Number(counted?.[1])).toBeGreaterThan(1);
  });
});
