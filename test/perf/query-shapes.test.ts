import type { CommandStartedEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBackgroundCommand } from '../support/background-commands';
import { encodeTime } from 'ulid';
import { READABLE_PRODUCT } from '../../src/db/catalog/readable-filter';
import { INDEXES } from '../../src/db/mongo';
import { RECENT_WALK } from '../../src/db/orders/order-repository';
import { WALK_BUDGET, WITHOUT_SEARCH_FIELDS } from '../../src/db/catalog/product-search';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { FIXTURE_ORDERS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * The shape of every query the API sends, seen through the driver's command monitoring: which
 * commands, filters, sorts and limits, and that MongoDB (MONGODB_URI) has an index for each.
 * What the embedded engine does with them at 20,000 documents is test/perf/query-plans.test.ts.
 * The GraphQL side (keyset connections, N+1) is covered in test/graphql/round-trips.test.ts.
 *
 * Fixtures: 20 products, 5 per category; "gift" matches 5 of them, "soundwave" 2.
 */

/** Every collection's own index: `_id` is a product's id and an order's ULID. */
const PRIMARY_KEY = { key: { _id: 1 }, name: '_id_' };

/** Driver housekeeping, not data access. */
const HOUSEKEEPING = new Set([
  'hello',
  'isMaster',
  'ismaster',
  'ping',
  'endSessions',
  'buildInfo',
  'killCursors',
]);

// `_id` is read: a document another writer keyed its own way is told apart by it.
const PROJECTION = WITHOUT_SEARCH_FIELDS;
/** A page merged with the pending products keeps `_id` until the merge (as every read now does). */
const MERGE_PROJECTION = WITHOUT_SEARCH_FIELDS;

let server: TestServer;
let commands: CommandStartedEvent[] = [];
/** Every data command of every request, for the index check at the end. */
const everything: CommandStartedEvent[] = [];
let aliceToken: string;

beforeAll(async () => {
  server = await startTestServer();
  aliceToken = await mintToken({ sub: 'cus_alice' });
  server.database.client.on('commandStarted', (event) => {
    if (
      event.databaseName === server.testDb.dbName &&
      !HOUSEKEEPING.has(event.commandName) &&
      !isBackgroundCommand(event.command)
    ) {
      commands.push(event);
      everything.push(event);
    }
  });
});
afterAll(() => server.stop());

/**
/**
 * Products written since the change feed's position, as dates or as text (src/db/feed/range.ts):
 * two ranges of the `updated_at` index, `{$or: [{updated_at: {$gte}}, {updated_at: {$gte, $lte}}]}`.
 */
function expectWrittenSince(filter: Document): void {
  const [dates, texts] = filter.$or as [Document, Document];
  expect(Object.keys(dates.updated_at as Document)).toEqual(['$gte']);
  expect((dates.updated_at as Document).$gte).toBeInstanceOf(Date);
  expect(Object.keys(texts.updated_at as Document)).toEqual(['$gte', '$lte']);
  expect(typeof (texts.updated_at as Document).$gte).toBe('string');
}

/**
 * `{$and: [{search_grams: {$all: grams}}, words]}` where grams are some of `of` (which ones the
 * sample decides: src/db/catalog/gram-choice.ts). A count takes, beside the grams, the products
 * written since the change feed's position (`{$or: [grams, writtenSince]}`).
 */
/** A count's filter ends with the clause that leaves out what no page can serve (issue 36, row 9). */
function expectGramsAndWords(filter: unknown, of: string[], words: unknown, counted = false): void {
  const [first, ...rest] = (filter as { $and: [Document, ...unknown[]] }).$and;
  const pending = first.$or as [Document, Document] | undefined;
  if (pending) expectWrittenSince(pending[1]);
  const grams = (pending ? pending[0] : first) as { search_grams: { $all: string[] } };
  expect(grams.search_grams.$all.length).toBeGreaterThan(0);
  expect(of).toEqual(expect.arrayContaining(grams.search_grams.$all));
  expect(rest).toEqual(counted ? [words, READABLE_PRODUCT] : [words]);
}

/** The one lookup that tells whether any product has a category (src/db/catalog/category-probe.ts), asked once per process. */
function withoutCategoryProbe(seen: Seen): string[] {
  return seen.commands
    .filter(
      (command) =>
        !(command.find === 'products' && 'category_key' in (command.filter ?? {}) && command.limit === 1),
    )
    .map((command) => Object.keys(command)[0]!);
}

interface Seen {
  status: number;
  names: string[];
  commands: Document[];
}

/** One /api/v1 request over HTTP and the database commands it caused. */
async function commandsOf(path: string, headers: Record<string, string> = {}): Promise<Seen> {
  commands = [];
  const response = await server.request(path, { headers });
  await response.arrayBuffer();
  const seen = commands;
  commands = [];
  return {
    status: response.status,
    names: seen.map((event) => event.commandName),
    commands: seen.map((e) => e.command),
  };
}

/** The driver hands the sort over as a Map. */
function plain(value: unknown): Record<string, unknown> | undefined {
  if (value instanceof Map) return Object.fromEntries(value) as Record<string, unknown>;
  return value as Record<string, unknown> | undefined;
}

/** The filter a count-like command applies: `count.query` or the `$match` of countDocuments. */
function countFilter(command: Document): unknown {
  if (command.count !== undefined) return command.query;
  const match = (command.pipeline as Document[]).find((stage) => '$match' in stage);
  return match?.$match;
}

/**
 * A numbered page: one aggregation that matches, sorts on _id (the id), skips (before projecting:
 * find projects every skipped row), limits and projects.
 */
function expectListFind(
  page: Document | undefined,
  limit: number,
  skip: number,
  projection: Document = PROJECTION,
  collection = 'products',
): void {
  expect(page?.aggregate).toBe(collection);
  const stages = (page?.pipeline as Document[]).map((stage) => plain(stage) as Document);
  expect(stages.map((stage) => Object.keys(stage)[0])).toEqual([
    '$match',
    '$sort',
    ...(skip > 0 ? ['$skip'] : []),
    '$limit',
    '$project',
  ]);
  expect(plain(stages[1]!.$sort)).toEqual({ _id: 1 });
  if (skip > 0) expect(stages[2]!.$skip).toBe(skip);
  expect(stages.at(-2)!.$limit).toBe(limit);
  expect(stages.at(-1)!.$project).toEqual(projection);
}

/** The products of a page the search projection selected: one find by their `_id`s. */
function expectFetchByIds(fetch: Document | undefined): void {
  expect(fetch?.find).toBe('products');
  expect(Object.keys(plain(fetch?.filter) as Document)).toEqual(['_id']);
  expect(Object.keys((plain(fetch?.filter) as Document)._id as Document)).toEqual(['$in']);
  expect(fetch?.projection).toEqual(MERGE_PROJECTION);
}

/**
 * A search page's first command: the walk of at most WALK_BUDGET products in id order that
 * stops at the page's last match (src/db/catalog/product-search.ts).
 */
function expectSearchWalk(walk: Document | undefined, limit: number, skip: number): Document {
  expect(walk?.aggregate).toBe('products');
  const stages = (walk?.pipeline as Document[]).map((stage) => plain(stage) as Document);
  expect(stages.map((stage) => Object.keys(stage)[0])).toEqual([
    '$sort',
    '$limit',
    '$match',
    ...(skip > 0 ? ['$skip'] : []),
    '$limit',
    '$project',
  ]);
  expect(plain(stages[0]!.$sort)).toEqual({ _id: 1 });
  expect(stages[1]!.$limit).toBe(WALK_BUDGET);
  expect(stages.at(-2)!.$limit).toBe(limit);
  expect(stages.at(-1)!.$project).toEqual(PROJECTION);
  return stages[2]!.$match as Document;
}

/** The filter of a numbered page. */
function pageFilter(page: Document | undefined): unknown {
  return (page?.pipeline as Document[])[0]?.$match;
}

describe('REST product list', () => {
  it('page 1 of the whole catalogue: one find sorted on _id (the id) with a limit, and an exact count', async () => {
    const seen = await commandsOf('/api/v1/products?per_page=5');
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['aggregate', 'aggregate']);
    expectListFind(seen.commands[0], 5, 0);
    expect(pageFilter(seen.commands[0])).toEqual({});
    // countDocuments, never estimatedDocumentCount (DocumentDB estimates from planner statistics),
    // of the products a page can serve.
    expect(countFilter(seen.commands[1] as Document)).toEqual(READABLE_PRODUCT);
  });

  it('a later page skips (page - 1) × per_page in the same find, and reuses the total page 1 counted', async () => {
    await commandsOf('/api/v1/products?per_page=5');
    const seen = await commandsOf('/api/v1/products?per_page=5&page=3');
    expect(seen.names).toEqual(['aggregate']);
    expectListFind(seen.commands[0], 5, 10);
  });

  it('a partial, non-empty last page proves the total: no count at all', async () => {
    const seen = await commandsOf('/api/v1/products?per_page=15&page=2');
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['aggregate']);
    expectListFind(seen.commands[0], 15, 15);
  });

  it('a page past the end still counts (an empty page proves nothing)', async () => {
    const seen = await commandsOf('/api/v1/products?page=9&category=Software');
    expect(withoutCategoryProbe(seen)).toEqual(['aggregate', 'aggregate']);
  });

  it('with search: the walk in id order fills the page, and one count of the same words with their grams', async () => {
    const seen = await commandsOf('/api/v1/products?search=gift&per_page=2');
    expect(seen.names).toEqual(['aggregate', 'aggregate']);
    const words = expectSearchWalk(seen.commands[0], 2, 0);
    expect(JSON.stringify(words)).toContain('"$regex":"gift"');
    // Counted on the gateway's search projection, through its gram index.
    expect(seen.commands[1]!.aggregate).toBe(SEARCH_PROJECTION_COLLECTION);
    expectGramsAndWords(countFilter(seen.commands[1] as Document), ['gif', 'ift'], words, true);
  });

  it('with search matching less than a page: the walk, then the gram index (hinted); no count', async () => {
    const seen = await commandsOf('/api/v1/products?search=gift');
    // The feed reads the log: no product is pending, so no read of recent writes beside the page.
    // The gateway's search projection selects the page's ids; one find reads those products.
    expect(seen.names).toEqual(['aggregate', 'aggregate', 'find']);
    const words = expectSearchWalk(seen.commands[0], 15, 0);
    expectListFind(seen.commands[1], 15, 0, { _id: 1 }, SEARCH_PROJECTION_COLLECTION);
    expectGramsAndWords(pageFilter(seen.commands[1]), ['gif', 'ift'], words);
    expect(seen.commands[1]!.hint).toBe('search_grams_1');
    expectFetchByIds(seen.commands[2]);
  });

  it('with category: an equality on the lower-cased category_key, then the id sort', async () => {
    const seen = await commandsOf('/api/v1/products?category=GIFT%20cards&per_page=2');
    expect(withoutCategoryProbe(seen)).toHaveLength(2);
    const [page, count] = seen.commands.slice(-2);
    expectListFind(page, 2, 0);
    expect(pageFilter(page)).toEqual({ category_key: 'gift cards' });
    expect(countFilter(count as Document)).toEqual({
      $and: [{ category_key: 'gift cards' }, READABLE_PRODUCT],
    });
  });

  it('sends nothing to the database for a request it rejects', async () => {
    const seen = await commandsOf('/api/v1/products?per_page=1000');
    expect(seen.status).toBe(422);
    expect(seen.names).toEqual([]);
  });
});

describe('REST search', () => {
  it('a full page: the walk, skipping in id order; the total page 1 counted is reused', async () => {
    const first = await commandsOf('/api/v1/products/search?term=gift&per_page=2');
    expect(first.names.length).toBeLessThanOrEqual(2);
    const seen = await commandsOf('/api/v1/products/search?term=gift&per_page=2&page=2');
    expect(seen.names).toHaveLength(1);
    expectSearchWalk(seen.commands[0], 2, 2);
  });

  it('a partial page: the walk, then the page through the gram index', async () => {
    const seen = await commandsOf('/api/v1/products/search?term=soundwave');
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['aggregate', 'aggregate', 'find']);
    expectSearchWalk(seen.commands[0], 15, 0);
    expectListFind(seen.commands[1], 15, 0, { _id: 1 }, SEARCH_PROJECTION_COLLECTION);
    expectFetchByIds(seen.commands[2]);
  });
});

describe('REST order', () => {
  const [first] = FIXTURE_ORDERS;

  it('one find on _id (the ULID) with limit 1, whatever the case of the path', async () => {
    const seen = await commandsOf(`/api/v1/orders/${first!.ulid.toLowerCase()}`, bearer(aliceToken));
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['find']);
    const find = seen.commands[0];
    expect(find?.find).toBe('orders');
    expect(find?.filter).toEqual({ _id: first!.ulid });
    expect(find?.limit).toBe(1);
  });

  it('no query at all without a valid token, nor for a path that is not a ULID', async () => {
    expect((await commandsOf(`/api/v1/orders/${first!.ulid}`)).names).toEqual([]);
    const notUlid = await commandsOf('/api/v1/orders/not-a-ulid', bearer(aliceToken));
    expect(notUlid.status).toBe(404);
    expect(notUlid.names).toEqual([]);
  });
});

describe('GraphQL order lists', () => {
  const LIST = /* GraphQL */ `
    query ($first: Int, $after: String, $last: Int, $before: String, $filter: OrderFilter) {
      orders(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
        edges {
          node {
            ulid
            items {
              productName
            }
          }
        }
        pageInfo {
          startCursor
          endCursor
        }
      }
    }
  `;
  const MINE = LIST.replace('orders(', 'viewer { orders(').replace(/}\s*}\s*$/, '} } }');
  let support: Record<string, string>;
  beforeAll(async () => {
    support = bearer(await mintToken({ sub: 'staff', scope: 'orders:read:all' }));
  });

  async function graphqlCommands(
    query: string,
    variables: Record<string, unknown>,
    headers: Record<string, string>,
  ) {
    commands = [];
    const reply = await server.graphql(query, variables, headers);
    expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
    const seen = commands;
    commands = [];
    return {
      data: reply.body.data,
      names: seen.map((event) => event.commandName),
      commands: seen.map((e) => e.command),
    };
  }

  function indexKey(name: string): string[] {
    const index = [PRIMARY_KEY, ...INDEXES.orders].find((candidate) => candidate.name === name);
    expect(index, name).toBeDefined();
    return Object.keys(index!.key);
  }

  /**
   * An order list's query, whichever plan sent it: the bounded walk of the newest orders (an
   * aggregation: key range, sort, $limit RECENT_WALK, the other members, the window's limit) or a
   * find (every member at once; hinted to the member's index after a walk that fell short).
   */
  function orderList(command: Document) {
    if (command.find !== undefined)
      return {
        filter: command.filter as Document,
        sort: plain(command.sort),
        limit: command.limit as number,
        hint: command.hint as string | undefined,
      };
    const stages = (command.pipeline as Document[]).map((stage) => plain(stage) as Document);
    const walk = stages.findIndex((stage) => stage.$limit === RECENT_WALK);
    expect(walk, JSON.stringify(stages)).toBeGreaterThan(0);
    const keyRange = stages.slice(0, walk).find((stage) => '$match' in stage)?.$match as Document | undefined;
    return {
      filter: { ...(stages[walk + 1]!.$match as Document), ...keyRange },
      sort: plain(stages[walk - 1]!.$sort),
      limit: stages[walk + 2]!.$limit as number,
      hint: undefined,
    };
  }

  it("viewer.orders: the newest orders walked on _id (the ULID), filtered to the customer's, limit first + 1", async () => {
    const seen = await graphqlCommands(MINE, { first: 5 }, bearer(aliceToken));
    // cus_alice has 13 of the 17 orders: the bounded walk fills the window alone.
    expect(seen.names).toEqual(['aggregate']);
    expect(seen.commands[0]!.aggregate).toBe('orders');
    expect(orderList(seen.commands[0]!)).toEqual({
      filter: { customer_id: 'cus_alice' },
      sort: { _id: -1 },
      limit: 6,
      hint: undefined,
    });
    // Every field, `_id` included: nothing to project.
    expect((seen.commands[0]!.pipeline as Document[]).at(-1)).toEqual({ $limit: 6 });
    // Unhinted: the planner walks the primary key for $sort + $limit (test/perf/query-plans.test.ts).
    expect(seen.commands[0]!.hint).toBeUndefined();
  });

  it("a customer with few orders: the walk falls short, then the customer's index answers", async () => {
    const bob = bearer(await mintToken({ sub: 'cus_bob' }));
    const seen = await graphqlCommands(MINE, { first: 5 }, bob);
    expect(seen.names).toEqual(['aggregate', 'find']);
    expect(orderList(seen.commands[1]!)).toEqual({
      filter: { customer_id: 'cus_bob' },
      sort: { _id: -1 },
      limit: 6,
      hint: 'customer_id_1',
    });
  });

  it('pages on with an _id bound: $lt after a cursor, $gt and an ascending walk before one', async () => {
    const first = await graphqlCommands(MINE, { first: 2 }, bearer(aliceToken));
    const page = (first.data as { viewer: { orders: { pageInfo: { endCursor: string } } } }).viewer.orders;
    const next = await graphqlCommands(
      MINE,
      { first: 2, after: page.pageInfo.endCursor },
      bearer(aliceToken),
    );
    const after = orderList(next.commands[0]!);
    expect(after.filter).toEqual({ customer_id: 'cus_alice', _id: { $lt: expect.stringMatching(/^01/) } });
    expect(after.sort).toEqual({ _id: -1 });
    const back = await graphqlCommands(
      MINE,
      { last: 2, before: page.pageInfo.endCursor },
      bearer(aliceToken),
    );
    const before = orderList(back.commands[0]!);
    expect(before.filter).toEqual({ customer_id: 'cus_alice', _id: { $gt: expect.stringMatching(/^01/) } });
    expect(before.sort).toEqual({ _id: 1 });
    expect(before.limit).toBe(3);
  });

  it('turns a created_at range into _id (ULID) bounds as well, so the primary key bounds it', async () => {
    const seen = await graphqlCommands(
      LIST,
      { first: 5, filter: { createdAfter: '2026-02-01T00:00:00Z', createdBefore: '2026-03-01T00:00:00Z' } },
      support,
    );
    const filter = seen.commands[0]!.filter as Document;
    expect(filter.created_at).toEqual({
      $gt: new Date('2026-02-01T00:00:00Z'),
      $lt: new Date('2026-03-01T00:00:00Z'),
    });
    // The first whole second after the lower bound, and the upper bound, as ULID time prefixes.
    const lowest = (iso: string) => encodeTime(Date.parse(iso), 10) + '0'.repeat(16);
    expect(filter._id).toEqual({
      $gte: lowest('2026-02-01T00:00:01Z'),
      $lt: lowest('2026-03-01T00:00:00Z'),
    });
  });

  it.each([
    ['a date range', '_id_', { createdAfter: '2026-02-01T00:00:00Z' }],
    ['currency alone (walks _id_, filtering)', '_id_', { currency: 'usd' }],
    ['customerId', 'customer_id_1', { customerId: 'cus_bob' }],
    [
      'customerId with every other member',
      'customer_id_1',
      {
        customerId: 'cus_alice',
        paymentStatus: ['PENDING'],
        fulfillmentStatus: ['PENDING', 'PROCESSING'],
        currency: 'GBP',
        createdAfter: '2026-01-01T00:00:00Z',
      },
    ],
    ['paymentStatus', 'payment_status_1', { paymentStatus: ['PENDING'] }],
    [
      'paymentStatus with currency and dates',
      'payment_status_1',
      { paymentStatus: ['COMPLETED'], currency: 'EUR', createdBefore: '2026-03-01T00:00:00Z' },
    ],
    [
      'fulfillmentStatus',
      'fulfillment_status_1',
      { fulfillmentStatus: ['PROCESSING', 'PARTIALLY_FULFILLED'] },
    ],
  ])('orders with %s: in _id (ULID) order, served by %s', async (_name, index, filter) => {
    const seen = await graphqlCommands(LIST, { first: 5, filter }, support);
    // A list without an indexed member is one find on the primary key; one with such a member is
    // the bounded walk, then (when it falls short) a find hinted to that member's index.
    const last = orderList(seen.commands.at(-1)!);
    if (index === '_id_') expect(seen.names).toEqual(['find']);
    else if (seen.names.length === 2) expect(last.hint).toBe(index);
    expect(last.sort).toEqual({ _id: -1 });
    expect(last.limit).toBe(6);
    if (index !== '_id_') expect(servedBy(filterFields(last.filter), [], [indexKey(index)])).toBe(true);
    else expect(last.hint).toBe('_id_');
    expect(servedBy(filterFields(last.filter), Object.keys(last.sort ?? {}), [])).toBe(true);
  });

  it('counts with the same filter, without the keyset bound, only when totalCount is asked', async () => {
    const query = LIST.replace('edges {', 'totalCount edges {');
    const seen = await graphqlCommands(query, { first: 1, filter: { paymentStatus: ['PENDING'] } }, support);
    expect(seen.names.at(-1)).toBe('aggregate');
    expect(countFilter(seen.commands.at(-1)!)).toEqual({ payment_status: { $in: ['pending'] } });
  });

  it('sends nothing for a caller who may not list orders', async () => {
    commands = [];
    await server.graphql(LIST, { first: 5 }, bearer(aliceToken));
    await server.graphql(MINE, { first: 5 });
    expect(commands).toEqual([]);
  });
});

describe('GraphQL categories and brands', () => {
  it('one aggregation each, grouping the whole collection (a scan, cached by the response cache)', async () => {
    commands = [];
    const reply = await server.graphql('{ categories { name } brands { id } }');
    expect(reply.body.errors).toBeUndefined();
    const seen = commands;
    commands = [];
    expect(seen.map((event) => event.commandName)).toEqual(['aggregate', 'aggregate']);
    for (const event of seen) {
      expect(event.command.aggregate).toBe('products');
      // Of the products a page can serve (issue 36, row 9).
      expect((event.command.pipeline as Document[]).map((stage) => Object.keys(stage)[0])).toEqual([
        '$match',
        '$group',
      ]);
      expect((event.command.pipeline as Document[])[0]!.$match).toEqual(READABLE_PRODUCT);
    }
  });
});

interface FilterFields {
  /** Equality, or $in (MongoDB merges one index scan per value to keep the sort). */
  equality: string[];
  /** Only $gt/$gte/$lt/$lte: index bounds when the field is in the key. */
  range: string[];
}

const RANGE_OPERATORS = new Set(['$gt', '$gte', '$lt', '$lte']);

function filterFields(filter: unknown): FilterFields {
  const fields: FilterFields = { equality: [], range: [] };
  const visit = (part: unknown) => {
    if (!part || typeof part !== 'object') return;
    for (const [field, value] of Object.entries(part)) {
      if (field === '$and') (value as unknown[]).forEach(visit);
      else if (field.startsWith('$'))
        continue; // $or of regexes: scanned, see docs/benchmarks.md
      else if (value && typeof value === 'object' && !(value instanceof Date)) {
        const operators = Object.keys(value);
        if (operators.every((operator) => RANGE_OPERATORS.has(operator))) fields.range.push(field);
        else if (operators.includes('$in')) fields.equality.push(field);
        // $regex: scanned, see docs/benchmarks.md
      } else fields.equality.push(field);
    }
  };
  visit(filter);
  return fields;
}

/**
 * How the embedded engine (DocumentDB) can serve a query: it reads an order only from the primary
 * key, so a sort must be on `_id` alone, walked in order (the repositories hint it); a filter is
 * served when one of its fields leads an index (a bitmap scan), or `_id` bounds the walk. Plans
 * themselves are checked in test/perf/query-plans.test.ts.
 */
function servedBy(fields: FilterFields, sortFields: string[], keys: string[][]): boolean {
  if (sortFields.length > 0) return sortFields.length === 1 && sortFields[0] === '_id';
  return keys.some((key) => fields.equality.includes(key[0]!) || fields.range.includes(key[0]!));
}

describe('indexes', () => {
  it('every index the queries rely on is created at start', async () => {
    for (const [collection, wanted] of Object.entries(INDEXES)) {
      const present = (await server.testDb.db.collection(collection).listIndexes().toArray()).map(
        (index) => index.name,
      );
      expect(present).toEqual(expect.arrayContaining(wanted.map((index) => index.name)));
    }
  });

  it('every filter and sort field sent above is served by one of those indexes', () => {
    const finds = everything.filter((event) => ['find', 'count', 'aggregate'].includes(event.commandName));
    expect(finds.length).toBeGreaterThan(10);
    for (const event of finds) {
      const command = event.command;
      const collection = (command.find ?? command.count ?? command.aggregate) as keyof typeof INDEXES;
      const keys = [PRIMARY_KEY, ...INDEXES[collection]].map((index) => Object.keys(index.key));
      const filter = event.commandName === 'find' ? command.filter : countFilter(command);
      const fields = filterFields(filter);
      const sortStage = (command.pipeline as Document[] | undefined)?.find((stage) => '$sort' in stage);
      const sortFields = Object.keys(plain(command.sort ?? sortStage?.$sort) ?? {});
      if (fields.equality.length + fields.range.length + sortFields.length === 0) continue; // metadata count or full scan by design
      expect(
        servedBy(fields, sortFields, keys),
        `${event.commandName} on ${collection} with filter ${JSON.stringify(filter)} and sort ${JSON.stringify(plain(command.sort))}`,
      ).toBe(true);
    }
  });
});
