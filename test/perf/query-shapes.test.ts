import type { CommandStartedEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDEXES } from '../../src/db/mongo';
import { FIXTURE_ORDERS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * The shape of every query /api/v1 sends, seen through the driver's command monitoring: what
 * MongoDB will do with it at scale does not depend on the test database (FerretDB ignores sorts
 * and indexes), only on the commands. docs/benchmarks.md lists each one with its index and cost.
 * The GraphQL side (keyset connections, N+1) is covered in test/graphql/round-trips.test.ts.
 *
 * Fixtures: 20 products, 5 per category; "gift" matches 5 of them, "soundwave" 2.
 */

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

let server: TestServer;
let commands: CommandStartedEvent[] = [];
/** Every data command of every request, for the index check at the end. */
const everything: CommandStartedEvent[] = [];
let aliceToken: string;

beforeAll(async () => {
  server = await startTestServer();
  aliceToken = await mintToken({ sub: 'cus_alice' });
  server.database.client.on('commandStarted', (event) => {
    if (event.databaseName === server.testDb.dbName && !HOUSEKEEPING.has(event.commandName)) {
      commands.push(event);
      everything.push(event);
    }
  });
});
afterAll(() => server.stop());

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

function expectListFind(find: Document | undefined, limit: number, skip: number): void {
  expect(find?.find).toBe('products');
  expect(plain(find?.sort)).toEqual({ id: 1 });
  expect(find?.limit).toBe(limit);
  expect(find?.skip ?? 0).toBe(skip);
  expect(plain(find?.projection)).toEqual({ _id: 0 });
}

describe('REST product list', () => {
  it('page 1 of the whole catalogue: one find sorted on id with a limit, and a metadata count', async () => {
    const seen = await commandsOf('/api/v1/products?per_page=5');
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['find', 'count']);
    expectListFind(seen.commands[0], 5, 0);
    expect(seen.commands[0]?.filter).toEqual({});
    // estimatedDocumentCount: `count` with no query, answered from collection metadata.
    expect(seen.commands[1]?.count).toBe('products');
    expect(seen.commands[1]?.query ?? {}).toEqual({});
  });

  it('a later page skips (page - 1) × per_page in the same find', async () => {
    const seen = await commandsOf('/api/v1/products?per_page=5&page=3');
    expect(seen.names).toEqual(['find', 'count']);
    expectListFind(seen.commands[0], 5, 10);
  });

  it('a partial, non-empty last page proves the total: no count at all', async () => {
    const seen = await commandsOf('/api/v1/products?per_page=15&page=2');
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['find']);
    expectListFind(seen.commands[0], 15, 15);
  });

  it('a page past the end still counts (an empty page proves nothing)', async () => {
    const seen = await commandsOf('/api/v1/products?page=9');
    expect(seen.names).toEqual(['find', 'count']);
  });

  it('with search: one find with the escaped, case-insensitive words and one count of the same filter', async () => {
    const seen = await commandsOf('/api/v1/products?search=gift&per_page=2');
    expect(seen.names).toHaveLength(2);
    expect(seen.names[0]).toBe('find');
    expect(['count', 'aggregate']).toContain(seen.names[1]);
    expectListFind(seen.commands[0], 2, 0);
    const filter = seen.commands[0]?.filter as Document;
    expect(JSON.stringify(filter)).toContain('"$regex":"gift"');
    expect(countFilter(seen.commands[1] as Document)).toEqual(filter);
  });

  it('with search matching less than a page: the find alone', async () => {
    const seen = await commandsOf('/api/v1/products?search=gift');
    expect(seen.names).toEqual(['find']);
  });

  it('with category: an equality on the lower-cased category_key, then the id sort', async () => {
    const seen = await commandsOf('/api/v1/products?category=GIFT%20cards&per_page=2');
    expect(seen.names).toHaveLength(2);
    expectListFind(seen.commands[0], 2, 0);
    expect(seen.commands[0]?.filter).toEqual({ category_key: 'gift cards' });
    expect(countFilter(seen.commands[1] as Document)).toEqual({ category_key: 'gift cards' });
  });

  it('sends nothing to the database for a request it rejects', async () => {
    const seen = await commandsOf('/api/v1/products?per_page=1000');
    expect(seen.status).toBe(422);
    expect(seen.names).toEqual([]);
  });
});

describe('REST search', () => {
  it('a full page: one limited find on the id order and one count of the same filter', async () => {
    const seen = await commandsOf('/api/v1/products/search?term=gift&per_page=2&page=2');
    expect(seen.names).toHaveLength(2);
    expectListFind(seen.commands[0], 2, 2);
    expect(countFilter(seen.commands[1] as Document)).toEqual(seen.commands[0]?.filter);
  });

  it('a partial page: the find alone', async () => {
    const seen = await commandsOf('/api/v1/products/search?term=soundwave');
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['find']);
    expectListFind(seen.commands[0], 15, 0);
  });
});

describe('REST order', () => {
  const [first] = FIXTURE_ORDERS;

  it('one find on the unique ulid with limit 1, whatever the case of the path', async () => {
    const seen = await commandsOf(`/api/v1/orders/${first!.ulid.toLowerCase()}`, bearer(aliceToken));
    expect(seen.status).toBe(200);
    expect(seen.names).toEqual(['find']);
    const find = seen.commands[0];
    expect(find?.find).toBe('orders');
    expect(find?.filter).toEqual({ ulid: first!.ulid });
    expect(find?.limit).toBe(1);
  });

  it('no query at all without a valid token, nor for a path that is not a ULID', async () => {
    expect((await commandsOf(`/api/v1/orders/${first!.ulid}`)).names).toEqual([]);
    const notUlid = await commandsOf('/api/v1/orders/not-a-ulid', bearer(aliceToken));
    expect(notUlid.status).toBe(404);
    expect(notUlid.names).toEqual([]);
  });
});

/** Equality fields, then sort fields (ESR): the key prefix an index needs to serve the query. */
function indexablePrefix(filter: unknown, sort: Record<string, unknown> | undefined): string[][] {
  const equality: string[] = [];
  const visit = (part: unknown) => {
    if (!part || typeof part !== 'object') return;
    for (const [field, value] of Object.entries(part)) {
      if (field === '$and') (value as unknown[]).forEach(visit);
      else if (field.startsWith('$'))
        continue; // $or of regexes: scanned, see docs/benchmarks.md
      else if (value && typeof value === 'object' && '$regex' in value) continue;
      else equality.push(field);
    }
  };
  visit(filter);
  return [equality, Object.keys(sort ?? {})];
}

function servedBy(equality: string[], sortFields: string[], keys: string[][]): boolean {
  return keys.some((key) => {
    const head = key.slice(0, equality.length);
    return (
      equality.every((field) => head.includes(field)) &&
      sortFields.every((field, index) => key[equality.length + index] === field)
    );
  });
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
      const collection = (command.find ?? command.count ?? command.aggregate) as 'products' | 'orders';
      const keys = INDEXES[collection].map((index) => Object.keys(index.key));
      const filter = event.commandName === 'find' ? command.filter : countFilter(command);
      const [equality, sortFields] = indexablePrefix(filter, plain(command.sort));
      if (equality!.length === 0 && sortFields!.length === 0) continue; // metadata count or full scan by design
      expect(
        servedBy(equality!, sortFields!, keys),
        `${event.commandName} on ${collection} with filter ${JSON.stringify(filter)} and sort ${JSON.stringify(plain(command.sort))}`,
      ).toBe(true);
    }
  });
});
