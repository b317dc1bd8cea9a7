import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import {
  ALL_PRODUCT_IDS,
  dataOf,
  fixtureIds,
  idsOf,
  matchesSearch,
  singleError,
  type ConnectionReply,
  CONNECTION_PAGE,
} from './helpers';

/** Cursor paging over `products` and `searchProducts`: forwards, backwards, windows and bad cursors. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const CONNECTION = `totalCount ${CONNECTION_PAGE}`;

const PRODUCTS = /* GraphQL */ `
  query Products($first: Int, $last: Int, $after: String, $before: String, $search: String, $category: String) {
    products(first: $first, last: $last, after: $after, before: $before, search: $search, category: $category) {
      ${CONNECTION}
    }
  }
`;

const SEARCH = /* GraphQL */ `
  query Search($term: String!, $first: Int, $last: Int, $after: String, $before: String) {
    searchProducts(term: $term, first: $first, last: $last, after: $after, before: $before) {
      ${CONNECTION}
    }
  }
`;

type Args = Record<string, unknown>;

async function products(variables: Args): Promise<ConnectionReply> {
  return dataOf<{ products: ConnectionReply }>(await server.graphql(PRODUCTS, variables)).products;
}

async function searchProducts(variables: Args): Promise<ConnectionReply> {
  return dataOf<{ searchProducts: ConnectionReply }>(await server.graphql(SEARCH, variables)).searchProducts;
}

/** Follows endCursor from the start until hasNextPage is false. */
async function walkForwards(fetch: (after: string | null) => Promise<ConnectionReply>) {
  const pages: ConnectionReply[] = [];
  let after: string | null = null;
  for (let guard = 0; guard < 100; guard += 1) {
    const page = await fetch(after);
    pages.push(page);
    if (!page.pageInfo.hasNextPage) return pages;
    after = page.pageInfo.endCursor;
  }
  throw new Error('paging forwards did not end');
}

/** Follows startCursor from the end until hasPreviousPage is false. */
async function walkBackwards(fetch: (before: string | null) => Promise<ConnectionReply>) {
  const pages: ConnectionReply[] = [];
  let before: string | null = null;
  for (let guard = 0; guard < 100; guard += 1) {
    const page = await fetch(before);
    pages.push(page);
    if (!page.pageInfo.hasPreviousPage) return pages;
    before = page.pageInfo.startCursor;
  }
  throw new Error('paging backwards did not end');
}

describe('paging forwards and backwards', () => {
  it('walks products(first: 3) to the end, then back to the start with last: 3', async () => {
    const forwards = await walkForwards((after) => products({ first: 3, after }));
    expect(forwards.map(idsOf)).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
      [10, 11, 12],
      [13, 14, 15],
      [16, 17, 18],
      [19, 20],
    ]);
    expect(forwards.flatMap(idsOf)).toEqual(ALL_PRODUCT_IDS);
    expect(forwards.map((page) => page.pageInfo.hasNextPage)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(forwards.map((page) => page.pageInfo.hasPreviousPage)).toEqual([
      false,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    for (const page of forwards) {
      expect(page.totalCount).toBe(20);
      expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor);
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor);
    }

    // From the last forward page's end, there is nothing more; the end cursor stays usable.
    const end = forwards.at(-1)!.pageInfo.endCursor;
    const beyond = await products({ first: 3, after: end });
    expect(idsOf(beyond)).toEqual([]);
    expect(beyond.pageInfo.hasNextPage).toBe(false);

    // And back: before the end, three at a time, to the start.
    const backwards = await walkBackwards((before) => products({ last: 3, before }));
    expect(backwards.map(idsOf)).toEqual([
      [18, 19, 20],
      [15, 16, 17],
      [12, 13, 14],
      [9, 10, 11],
      [6, 7, 8],
      [3, 4, 5],
      [1, 2],
    ]);
    expect(backwards.map((page) => page.pageInfo.hasPreviousPage)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(backwards.map((page) => page.pageInfo.hasNextPage)).toEqual([
      false,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);

    // The same product has the same cursor whichever direction found it.
    const forwardCursors = new Map(
      forwards.flatMap((page) => page.edges.map((e) => [e.node.databaseId, e.cursor])),
    );
    for (const edge of backwards.flatMap((page) => page.edges)) {
      expect(edge.cursor).toBe(forwardCursors.get(edge.node.databaseId));
    }

    // Back to the start, then forwards again from the first cursor.
    const start = backwards.at(-1)!;
    expect(idsOf(await products({ first: 3, after: start.pageInfo.endCursor }))).toEqual([3, 4, 5]);
    const before = await products({ last: 3, before: start.pageInfo.startCursor });
    expect(idsOf(before)).toEqual([]);
    expect(before.pageInfo.hasPreviousPage).toBe(false);
  });

  it('walks a search forwards and backwards with the same results', async () => {
    const expected = fixtureIds((product) => matchesSearch(product, 'gift'));
    const forwards = await walkForwards((after) => products({ first: 2, after, search: 'gift' }));
    expect(forwards.flatMap(idsOf)).toEqual(expected);
    const backwards = await walkBackwards((before) => searchProducts({ term: 'gift', last: 2, before }));
    expect(backwards.reverse().flatMap(idsOf)).toEqual(expected);
  });

  it('walks a category to the end', async () => {
    const pages = await walkForwards((after) => products({ first: 2, after, category: 'software' }));
    expect(pages.map(idsOf)).toEqual([[11, 12], [13, 14], [15]]);
    expect(pages.every((page) => page.totalCount === 5)).toBe(true);
  });

  it('pages the window between an after and a before cursor', async () => {
    const all = await products({ first: 20 });
    const cursorOf = (id: number) => all.edges.find((edge) => edge.node.databaseId === id)!.cursor;
    const window = { after: cursorOf(5), before: cursorOf(12) };

    expect(idsOf(await products({ ...window, first: 100 }))).toEqual([6, 7, 8, 9, 10, 11]);
    const head = await products({ ...window, first: 3 });
    expect(idsOf(head)).toEqual([6, 7, 8]);
    expect(head.pageInfo.hasNextPage).toBe(true);
    const tail = await products({ ...window, last: 3 });
    expect(idsOf(tail)).toEqual([9, 10, 11]);
    expect(tail.pageInfo.hasPreviousPage).toBe(true);
    expect(idsOf(await products({ ...window }))).toEqual([6, 7, 8, 9, 10, 11]);
    expect(idsOf(await products({ after: cursorOf(5), before: cursorOf(6) }))).toEqual([]);
  });

  it('answers first: 0 and last: 0 with no edges, null cursors and the total', async () => {
    for (const size of [{ first: 0 }, { last: 0 }]) {
      const empty = await products(size);
      expect(empty.edges).toEqual([]);
      expect(empty.totalCount).toBe(20);
      expect(empty.pageInfo.startCursor).toBeNull();
      expect(empty.pageInfo.endCursor).toBeNull();
    }
    expect((await products({ first: 0 })).pageInfo.hasNextPage).toBe(true);
  });

  it('returns null cursors on an empty result', async () => {
    const none = await products({ search: 'no-such-product-anywhere' });
    expect(none.edges).toEqual([]);
    expect(none.totalCount).toBe(0);
    expect(none.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: null,
    });
  });

  it('takes up to 100 at once, and 15 by default', async () => {
    expect(idsOf(await products({ first: 100 }))).toEqual(ALL_PRODUCT_IDS);
    expect(idsOf(await products({ last: 100 }))).toEqual(ALL_PRODUCT_IDS);
    expect(idsOf(await products({}))).toHaveLength(15);
    expect(idsOf(await searchProducts({ term: 'a' }))).toHaveLength(15);
  });

  it('counts the whole filtered result in totalCount, whatever the window', async () => {
    const gift = fixtureIds((product) => matchesSearch(product, 'gift')).length;
    expect((await products({ search: 'gift', first: 1 })).totalCount).toBe(gift);
    expect((await searchProducts({ term: 'gift', last: 1 })).totalCount).toBe(gift);
    expect((await products({ category: 'Subscriptions', first: 1 })).totalCount).toBe(5);
    expect((await products({ category: 'subscriptions', search: 'soundwave' })).totalCount).toBe(2);
  });
});

describe('cursor validation', () => {
  async function giftCursor(): Promise<string> {
    const page = await products({ search: 'gift', first: 2 });
    return page.pageInfo.endCursor!;
  }

  it('accepts a cursor for the same query, however the text is cased', async () => {
    const cursor = await giftCursor();
    expect(idsOf(await products({ search: 'GIFT', first: 2, after: cursor }))).toEqual([3, 4]);
    expect(idsOf(await products({ search: '  gift ', first: 2, after: cursor }))).toEqual([3, 4]);
  });

  it('rejects a cursor from products(search: "gift") in products without search', async () => {
    const after = await giftCursor();
    const error = singleError(await server.graphql(PRODUCTS, { first: 2, after }), 'BAD_USER_INPUT');
    expect(error.message).toBe('The after cursor belongs to a different query.');
    expect(error.extensions?.errors).toEqual({ after: ['The after cursor belongs to a different query.'] });
    const other = await server.graphql(PRODUCTS, { first: 2, before: after, search: 'music' });
    expect(singleError(other, 'BAD_USER_INPUT').extensions?.errors).toHaveProperty('before');
  });

  it('rejects a cursor from products(search: "gift") in searchProducts(term: "gift")', async () => {
    const cursor = await giftCursor();
    for (const variables of [
      { term: 'gift', first: 2, after: cursor },
      { term: 'gift', last: 2, before: cursor },
    ]) {
      const reply = await server.graphql(SEARCH, variables);
      expect(reply.status).toBe(200);
      expect(reply.body.data).toBeNull();
      singleError(reply, 'BAD_USER_INPUT');
    }
  });

  it('rejects a searchProducts cursor in products, and a category cursor in another category', async () => {
    const search = await searchProducts({ term: 'gift', first: 1 });
    singleError(
      await server.graphql(PRODUCTS, { search: 'gift', after: search.pageInfo.endCursor }),
      'BAD_USER_INPUT',
    );
    const software = await products({ category: 'Software', first: 1 });
    singleError(
      await server.graphql(PRODUCTS, { category: 'Gift Cards', after: software.pageInfo.endCursor }),
      'BAD_USER_INPUT',
    );
    expect(
      idsOf(await products({ category: 'SOFTWARE', first: 1, after: software.pageInfo.endCursor })),
    ).toEqual([12]);
  });

  it.each([
    ['not-a-cursor'],
    ['!!!'],
    [''],
    ['   '],
    [Buffer.from('abc:1').toString('base64url')],
    [Buffer.from('Product:1').toString('base64url')],
    [Buffer.from('AAAAAAAAAAAA:0').toString('base64url')],
    ['x'.repeat(500)],
  ])('rejects the garbage cursor %j as BAD_USER_INPUT', async (cursor) => {
    for (const [query, variables] of [
      [PRODUCTS, { after: cursor }],
      [PRODUCTS, { before: cursor }],
      [SEARCH, { term: 'gift', after: cursor }],
    ] as const) {
      const reply = await server.graphql(query, variables);
      const error = singleError(reply, 'BAD_USER_INPUT');
      expect(error.message).toMatch(/cursor is not valid|belongs to a different query/);
    }
  });

  it.each([
    [{ first: 101 }, 'first'],
    [{ last: 101 }, 'last'],
    [{ first: -1 }, 'first'],
    [{ last: -5 }, 'last'],
  ])('rejects %j as BAD_USER_INPUT', async (variables, field) => {
    for (const [query, extra] of [
      [PRODUCTS, {}],
      [SEARCH, { term: 'gift' }],
    ] as const) {
      const error = singleError(await server.graphql(query, { ...extra, ...variables }), 'BAD_USER_INPUT');
      expect(error.message).toBe(`The ${field} argument must be between 0 and 100.`);
      expect(error.extensions?.errors).toEqual({
        [field]: [`The ${field} argument must be between 0 and 100.`],
      });
    }
  });
});
