import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { dataOf, globalId, singleError } from './helpers';

/** Relay global IDs: node(id) and nodes(ids) for every node type, and their failures. */

let server: TestServer;
let alice: Record<string, string>;
let bob: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer();
  alice = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
  bob = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.bob }));
});
afterAll(() => server.stop());

const NODE = /* GraphQL */ `
  query Node($id: ID!) {
    node(id: $id) {
      __typename
      id
      ... on Product {
        databaseId
        name
      }
      ... on Variant {
        databaseId
        name
      }
      ... on Order {
        databaseId
        ulid
      }
      ... on OrderItem {
        databaseId
        productName
      }
    }
  }
`;

const NODES = /* GraphQL */ `
  query Nodes($ids: [ID!]!) {
    nodes(ids: $ids) {
      __typename
      id
      ... on Product {
        databaseId
      }
      ... on Variant {
        databaseId
      }
      ... on Order {
        databaseId
      }
      ... on OrderItem {
        databaseId
      }
    }
  }
`;

interface NodeReply {
  __typename: string;
  id: string;
  databaseId: number;
  name?: string;
  ulid?: string;
  productName?: string;
}

async function node(id: string, headers: Record<string, string> = {}): Promise<NodeReply | null> {
  return dataOf<{ node: NodeReply | null }>(await server.graphql(NODE, { id }, headers)).node;
}

describe('global ID round trips', () => {
  it('uses base64url("Typename:databaseId") as every id', async () => {
    const reply = await server.graphql(
      `{ products(first: 3) { edges { node { id databaseId variant { id databaseId } } } } }`,
    );
    const nodes = dataOf<{
      products: {
        edges: { node: { id: string; databaseId: number; variant: { id: string; databaseId: number } } }[];
      };
    }>(reply).products.edges.map((edge) => edge.node);
    for (const product of nodes) {
      expect(product.id).toBe(globalId('Product', product.databaseId));
      expect(product.variant.id).toBe(globalId('Variant', product.variant.databaseId));
    }
  });

  it('round-trips every Product and its Variant through node(id)', async () => {
    for (const product of FIXTURE_PRODUCTS) {
      const productId = globalId('Product', product.id);
      expect(await node(productId)).toEqual({
        __typename: 'Product',
        id: productId,
        databaseId: product.id,
        name: product.name,
      });
      const variantId = globalId('Variant', product.variant.id);
      expect(await node(variantId)).toEqual({
        __typename: 'Variant',
        id: variantId,
        databaseId: product.variant.id,
        name: product.variant.name,
      });
    }
  });

  it('round-trips ids taken from a response', async () => {
    const reply = await server.graphql(
      `{ products(first: 1, search: "Orbit") { edges { node { id variant { id } } } } }`,
    );
    const [edge] = dataOf<{ products: { edges: { node: { id: string; variant: { id: string } } }[] } }>(reply)
      .products.edges;
    expect((await node(edge!.node.id))?.databaseId).toBe(20);
    expect((await node(edge!.node.variant.id))?.databaseId).toBe(1020);
  });

  it('round-trips every Order and OrderItem for its customer', async () => {
    for (const order of FIXTURE_ORDERS) {
      const headers = order.customer_id === FIXTURE_CUSTOMERS.alice ? alice : bob;
      const orderId = globalId('Order', order.id);
      expect(await node(orderId, headers)).toEqual({
        __typename: 'Order',
        id: orderId,
        databaseId: order.id,
        ulid: order.ulid,
      });
      for (const item of order.items) {
        const itemId = globalId('OrderItem', item.id);
        expect(await node(itemId, headers)).toEqual({
          __typename: 'OrderItem',
          id: itemId,
          databaseId: item.id,
          productName: item.product_name,
        });
      }
    }
  });

  it('gives an order the same id through order(ulid) and node(id)', async () => {
    const reply = await server.graphql(
      `{ order(ulid: "01KE78KGFSQ4ZC7N2XW8RTB3MD") { id items { id } } }`,
      {},
      alice,
    );
    const order = dataOf<{ order: { id: string; items: { id: string }[] } }>(reply).order;
    expect(order.id).toBe(globalId('Order', 1));
    expect(order.items.map((item) => item.id)).toEqual([
      globalId('OrderItem', 101),
      globalId('OrderItem', 102),
    ]);
    expect((await node(order.id, alice))?.databaseId).toBe(1);
    expect((await node(order.items[1]!.id, alice))?.productName).toBe('Pixelforge 1,000 Gems');
  });

  it('lets the orders:read:all scope read any order and item node', async () => {
    const admin = bearer(await mintToken({ sub: 'support_agent', scope: 'orders:read:all' }));
    expect((await node(globalId('Order', 6), admin))?.databaseId).toBe(6);
    expect((await node(globalId('OrderItem', 103), admin))?.databaseId).toBe(103);
  });
});

describe('missing and malformed ids', () => {
  it('answers null for well-formed ids of objects that do not exist', async () => {
    expect(await node(globalId('Product', 999))).toBeNull();
    expect(await node(globalId('Variant', 9999))).toBeNull();
    // Id ranges are disjoint: a product id is not a variant id, an order id is not an item id.
    expect(await node(globalId('Variant', 1))).toBeNull();
    expect(await node(globalId('Product', 1001))).toBeNull();
    expect(await node(globalId('Order', 99), alice)).toBeNull();
    expect(await node(globalId('OrderItem', 1), alice)).toBeNull();
  });

  it.each([
    ['not a global id'],
    ['!!!'],
    [''],
    [globalId('Customer', 1)],
    [globalId('Product', 'abc')],
    [globalId('Product', 0)],
    [globalId('Product', -1)],
    [globalId('Product', '01')],
    [Buffer.from('Product').toString('base64url')],
    ['UHJvZHVjdDox'.repeat(10)],
  ])('rejects the malformed id %j as BAD_USER_INPUT', async (id) => {
    const reply = await server.graphql(NODE, { id });
    const error = singleError(reply, 'BAD_USER_INPUT');
    expect(error.message).toMatch(/is not a valid global ID\.$/);
    expect(error.path).toEqual(['node']);
    expect(reply.body.data).toEqual({ node: null });
  });

  it('rejects an order node anonymously, or with a bad token, as UNAUTHENTICATED', async () => {
    for (const headers of [{}, { authorization: 'Bearer not.a.token' }] as Record<string, string>[]) {
      for (const id of [globalId('Order', 1), globalId('OrderItem', 101), globalId('Order', 99)]) {
        const reply = await server.graphql(NODE, { id }, headers);
        expect(singleError(reply, 'UNAUTHENTICATED').message).toBe('Unauthenticated.');
        expect(reply.body.data).toEqual({ node: null });
      }
    }
  });

  it("rejects another customer's order and item nodes as FORBIDDEN", async () => {
    // Order 3 and its items belong to Bob.
    for (const id of [globalId('Order', 3), globalId('OrderItem', 104)]) {
      const reply = await server.graphql(NODE, { id }, alice);
      expect(singleError(reply, 'FORBIDDEN').message).toBe('This action is unauthorized.');
      expect(reply.body.data).toEqual({ node: null });
    }
  });
});

describe('nodes(ids)', () => {
  it('keeps the requested order, with null for missing ids', async () => {
    const ids = [
      globalId('Product', 7),
      globalId('Product', 999),
      globalId('Variant', 1002),
      globalId('Product', 1),
      globalId('Product', 7),
      globalId('Variant', 5),
    ];
    const reply = await server.graphql(NODES, { ids });
    expect(dataOf(reply).nodes).toEqual([
      { __typename: 'Product', id: ids[0], databaseId: 7 },
      null,
      { __typename: 'Variant', id: ids[2], databaseId: 1002 },
      { __typename: 'Product', id: ids[3], databaseId: 1 },
      { __typename: 'Product', id: ids[4], databaseId: 7 },
      null,
    ]);
  });

  it('mixes products, variants, orders and items for a signed-in customer', async () => {
    const ids = [
      globalId('Order', 1),
      globalId('Product', 20),
      globalId('OrderItem', 102),
      globalId('Variant', 1020),
    ];
    const reply = await server.graphql(NODES, { ids }, alice);
    expect(dataOf(reply).nodes).toEqual([
      { __typename: 'Order', id: ids[0], databaseId: 1 },
      { __typename: 'Product', id: ids[1], databaseId: 20 },
      { __typename: 'OrderItem', id: ids[2], databaseId: 102 },
      { __typename: 'Variant', id: ids[3], databaseId: 1020 },
    ]);
  });

  it('resolves the same id asked for by several fields of one request', async () => {
    const id = globalId('Product', 7);
    const reply = await server.graphql(
      `query ($id: ID!, $variant: ID!) {
        a: node(id: $id) { __typename id }
        b: node(id: $id) { __typename id }
        c: nodes(ids: [$id, $variant, $id]) { __typename id }
        d: node(id: $variant) { __typename id }
      }`,
      { id, variant: globalId('Variant', 1007) },
    );
    const product = { __typename: 'Product', id };
    const variant = { __typename: 'Variant', id: globalId('Variant', 1007) };
    expect(dataOf(reply)).toEqual({ a: product, b: product, c: [product, variant, product], d: variant });

    const order = globalId('Order', 1);
    const item = globalId('OrderItem', 101);
    const orders = await server.graphql(
      `query ($order: ID!, $item: ID!) {
        a: node(id: $order) { id }
        b: nodes(ids: [$order, $item, $item]) { id }
        c: node(id: $item) { id }
      }`,
      { order, item },
      alice,
    );
    expect(dataOf(orders)).toEqual({
      a: { id: order },
      b: [{ id: order }, { id: item }, { id: item }],
      c: { id: item },
    });
  });

  it('answers an empty list for no ids', async () => {
    expect(dataOf(await server.graphql(NODES, { ids: [] })).nodes).toEqual([]);
  });

  it('reports each forbidden or unauthenticated entry on its own, keeping the others', async () => {
    const ids = [globalId('Order', 1), globalId('Product', 2), globalId('Order', 3)];
    const reply = await server.graphql(NODES, { ids }, alice);
    expect(reply.body.data?.nodes).toEqual([
      { __typename: 'Order', id: ids[0], databaseId: 1 },
      { __typename: 'Product', id: ids[1], databaseId: 2 },
      null,
    ]);
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(reply.body.errors?.[0]?.path).toEqual(['nodes', 2]);

    const anonymous = await server.graphql(NODES, { ids });
    expect(anonymous.body.data?.nodes).toEqual([
      null,
      { __typename: 'Product', id: ids[1], databaseId: 2 },
      null,
    ]);
    expect(anonymous.body.errors?.map((error) => [error.extensions?.code, error.path])).toEqual([
      ['UNAUTHENTICATED', ['nodes', 0]],
      ['UNAUTHENTICATED', ['nodes', 2]],
    ]);
  });

  it('rejects a malformed id among them as BAD_USER_INPUT', async () => {
    const reply = await server.graphql(NODES, { ids: [globalId('Product', 1), 'garbage'] });
    const codes = (reply.body.errors ?? []).map((error) => error.extensions?.code);
    expect(codes.length).toBeGreaterThan(0);
    expect(new Set(codes)).toEqual(new Set(['BAD_USER_INPUT']));
  });
});
