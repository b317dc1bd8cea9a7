import { MongoClient, type CommandStartedEvent, type Db, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChangeFeed, type ChangeFeed } from '../../src/db/change-feed';
import { FEED_COMMENT } from '../../src/db/feed-types';
import { connectDatabase, type Database } from '../../src/db/mongo';
import { createProductRepository, type ProductRepository } from '../../src/db/catalog/product-repository';
import { createTotalCache } from '../../src/db/catalog/total-cache';
import { FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { loadFixtures } from '../../seed/load';
import { isBackgroundCommand } from '../support/background-commands';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 29: what one product page sends the database, through the driver's command monitoring,
 * as bench/query-shapes.ts measured the shapes on the embedded engine (docs/benchmarks.md, "Issue
 * 29: query shapes on this engine"). With its total kept (src/db/catalog/total-cache.ts), a page is one
 * aggregation walking the primary key, unhinted when unfiltered and first (a hint cost PostgreSQL
 * ~0.2 ms per read), and the change feed's "anything unhandled?" reads (one per kind of
 * `updated_at`), which concurrent pages share (src/db/feed/fresh-check.ts) without any of them missing
 * a write made before it asked.
 *
 * Fixtures: 20 products, 5 per category.
 */

const HOUSEKEEPING = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'endSessions', 'buildInfo']);

/**
 * The polling feed's "anything unhandled?": one `_id` past a watermark (src/db/feed/poll.ts), one
 * read per kind of `updated_at` it follows (dates and Laravel's text dates, src/db/feed/range.ts).
 */
function isFeedCheck(command: Document): boolean {
  return (
    command.find === 'products' &&
    command.comment === FEED_COMMENT &&
    command.limit === 1 &&
    JSON.stringify(command.projection) === '{"_id":1}'
  );
}

/** Products as another writer sees them: any `_id`. */
const storedProducts = (db: Db) => db.collection<{ _id: number; [field: string]: unknown }>('products');

/** A copy of product 1 under a new id (and variant id), written now. */
async function insertCopy(db: Db, id: number): Promise<void> {
  const template = (await storedProducts(db).findOne({ _id: 1 }))!;
  await storedProducts(db).insertOne({
    ...template,
    _id: id,
    id,
    variant: { ...(template.variant as object), id: 1_000 * id },
    updated_at: new Date(),
  });
}

let server: TestServer;
let writer: MongoClient;
let commands: Document[] = [];

beforeAll(async () => {
  server = await startTestServer();
  writer = await MongoClient.connect(server.testDb.uri);
  server.database.client.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.databaseName !== server.testDb.dbName || HOUSEKEEPING.has(event.commandName)) return;
    if (isFeedCheck(event.command) || !isBackgroundCommand(event.command)) commands.push(event.command);
  });
});
afterAll(async () => {
  await writer?.close();
  await server?.stop();
});

/** The commands of `request`, which reads one page. */
async function commandsOf(request: () => Promise<unknown>): Promise<Document[]> {
  commands = [];
  await request();
  const seen = commands;
  commands = [];
  return seen;
}

const restPage = async (path: string) => {
  const response = await server.request(path);
  expect(response.status).toBe(200);
  return (await response.json()) as { data: unknown[]; meta: { total: number } };
};

function stagesOf(command: Document | undefined): string[] {
  return ((command?.pipeline ?? []) as Document[]).map((stage) => Object.keys(stage)[0]!);
}

describe('a product page with its total kept', () => {
  // The feed reads the engine's log: whether the kept total is current is asked of PostgreSQL (the
  // log's position), so MongoDB sees the page alone.
  it('REST page 1: one unhinted aggregation over the primary key; nothing else', async () => {
    await restPage('/api/v1/products'); // counts the total once
    const sent = await commandsOf(() => restPage('/api/v1/products'));
    expect(sent.map((command) => Object.keys(command)[0])).toEqual(['aggregate']);
    const [page] = sent;
    expect(stagesOf(page)).toEqual(['$match', '$sort', '$limit', '$project']);
    expect(page!.pipeline[0].$match).toEqual({});
    expect(page!.hint).toBeUndefined();
  });

  it('GraphQL productPage: the same command', async () => {
    const query = '{ productPage(page: 1) { total items { databaseId } } }';
    await server.graphql(query);
    const sent = await commandsOf(() => server.graphql(query));
    expect(sent.map((command) => Object.keys(command)[0])).toEqual(['aggregate']);
    expect(sent[0]!.hint).toBeUndefined();
  });

  it('a later page and a filtered page keep the primary key hint (the planner would sort a scan or read the category)', async () => {
    await restPage('/api/v1/products?per_page=5');
    const [later] = await commandsOf(() => restPage('/api/v1/products?per_page=5&page=3'));
    expect(stagesOf(later)).toEqual(['$match', '$sort', '$skip', '$limit', '$project']);
    expect(later!.hint).toBe('_id_');
    // Known once asked (src/db/catalog/category-probe.ts): the page is then read as before.
    await restPage('/api/v1/products?category=Gift%20Cards&per_page=2');
    const [category] = await commandsOf(() => restPage('/api/v1/products?category=Gift%20Cards&per_page=2'));
    expect(category!.pipeline[0].$match).toEqual({ category_key: 'gift cards' });
    expect(category!.hint).toBe('_id_');
  });

  it("counts a write made just before a page while other pages' checks are out", async () => {
    let busy = true;
    // Pages asked without pause, so a check is out whenever the write lands.
    const traffic = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (busy) await restPage('/api/v1/products');
      }),
    );
    try {
      const before = (await restPage('/api/v1/products')).meta.total;
      for (let n = 1; n <= 5; n++) {
        await insertCopy(writer.db(server.testDb.dbName), 90_000 + n);
        expect((await restPage('/api/v1/products')).meta.total).toBe(before + n);
      }
    } finally {
      busy = false;
      await traffic;
    }
  });
});

describe('totals asked at once (the repository on a change feed of its own database)', () => {
  let tdb: TestDatabase;
  let watched: Database;
  let feed: ChangeFeed<Document>;
  let products: ProductRepository;
  let checks = 0;

  beforeAll(async () => {
    tdb = await openTestDatabase('page-checks');
    await loadFixtures(tdb.db);
    watched = await connectDatabase({ uri: tdb.uri, dbName: tdb.dbName, monitorCommands: true });
    watched.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (isFeedCheck(event.command)) checks++;
    });
    feed = await openChangeFeed<Document>(watched.db, 'products', {
      intervalMs: 60_000,
      batchSize: 500,
      reconcileMs: 3_600_000,
      lookBackMs: 5_000,
    });
    const totals = createTotalCache();
    feed.subscribe(totals.invalidate);
    products = createProductRepository(watched.db, { feed, totals });
  });
  afterAll(async () => {
    await feed?.close();
    await watched?.close();
    await tdb?.close();
  });

  it('share the feed check: one read for the first, one for all who asked while it was out', async () => {
    await products.count({ words: [] });
    checks = 0;
    const totals = await Promise.all(Array.from({ length: 20 }, () => products.count({ words: [] })));
    expect(totals).toEqual(Array.from({ length: 20 }, () => FIXTURE_PRODUCTS.length));
    // One read per kind of `updated_at` polling follows (dates, Laravel's text dates).
    expect(checks).toBe(2 * 2);
  });

  it('a write the feed has not read yet is counted by the next total asked', async () => {
    await insertCopy(tdb.db, 80_001);
    // The feed reads once a minute here: only the check can tell the kept total is stale.
    expect(await products.count({ words: [] })).toBe(FIXTURE_PRODUCTS.length + 1);
  });
});
