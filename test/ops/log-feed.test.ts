import type { CommandStartedEvent, Document } from 'mongodb';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logApplicationName } from '../../src/db/feed/log';
import { criteriaFor } from '../../src/catalog/product-query';
import { productFilter } from '../../src/db/catalog/product-plans';
import { openOutsideWriter, productLike, type OutsideWriter } from '../support/outside-writer';
import { countUnindexed } from '../../src/db/catalog/product-search';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { graphqlSearch, restSearch } from '../support/search-answers';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The feed reads the engine's log: a write is followed whatever its `updated_at` (none, hours
 * ahead, in 2099, text, a number) and a lone deletion at once. Every request sent after an outside
 * write committed answers the state after it — search by the new name and not the old, REST and
 * GraphQL totals, `categories`, and a cached page — with no waiting by the client: the request
 * itself waits for the feed to hand the write on. An independent `$regex` scan is the answer.
 */

let server: TestServer;
let writer: OutsideWriter;
const word = () => `logw${Math.random().toString(36).slice(2, 9)}`;

async function scanTotal(term: string): Promise<number> {
  return writer.products.countDocuments(productFilter(criteriaFor(term, undefined)) as Document);
}

/** Both APIs agree with the scan, right after the write (no retry). */
async function expectFound(term: string, ids: number[]): Promise<void> {
  const scanned = await scanTotal(term);
  expect(scanned).toBe(ids.length);
  for (const answer of [await restSearch(server, term), await graphqlSearch(server, term)]) {
    expect(answer.ids.sort()).toEqual([...ids].sort());
    expect(answer.total).toBe(ids.length);
  }
}

async function anyProductId(): Promise<number> {
  const product = await writer.products.findOne({ _id: { $type: 'number' } } as Document);
  return product!._id as unknown as number;
}

beforeAll(async () => {
  server = await startTestServer();
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
});

afterAll(async () => {
  await writer?.close();
  await server?.close();
});

describe('the feed follows the log', () => {
  it('reads the engine log, and this instance writes the grams for the fleet', async () => {
    // The lasting slot streams once its first resync (the grams of every product) is done.
    const leading = async () =>
      /^change_feed_log_leading 1$/m.test(await (await server.request('/metrics')).text());
    const deadline = Date.now() + 10_000;
    while (!(await leading()) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await leading()).toBe(true);
  });

  const stamps: [string, (doc: Document) => Document][] = [
    ['no updated_at at all', () => ({})],
    ['updated_at two hours ahead', () => ({ updated_at: new Date(Date.now() + 2 * 3_600_000) })],
    ['updated_at in 2099', () => ({ updated_at: new Date('2099-01-01T00:00:00Z') })],
    ['updated_at as ISO text with a zone', () => ({ updated_at: '2026-11-25T17:00:00+01:00' })],
    ['updated_at as a number', () => ({ updated_at: 1_700_000_000 })],
  ];
  for (const [label, stamp] of stamps) {
    it(`a rename with ${label} is found by its new name and not by its old, at once`, async () => {
      const id = await anyProductId();
      const before = word();
      const after = word();
      const doc = (await writer.products.findOne({ _id: id } as Document))!;
      await writer.products.updateOne({ _id: id } as Document, {
        $set: { name: `${doc.name} ${before}`, ...stamp(doc) },
      });
      await expectFound(before, [id]);
      await writer.products.updateOne({ _id: id } as Document, {
        $set: { name: `${doc.name} ${after}`, ...stamp(doc) },
      });
      await expectFound(after, [id]);
      await expectFound(before, []);
    });
  }

  it('a product too large for its search row does not stop the feed: searches scan, exact, until it goes', async () => {
    const template = (await writer.products.findOne({}))!;
    const id = 990_101;
    const rare = word();
    // 800,000 random CJK code points (2.4 MB): their distinct grams pass 16 MB, so no row holds them.
    const huge = Array.from({ length: 800_000 }, () =>
      String.fromCodePoint(0x4e00 + Math.floor(Math.random() * 20_000)),
    ).join('');
    await writer.products.insertOne(
      productLike(template, id, String(template.category_key), { name: `${rare} ${huge}` }),
    );
    const rows = server.testDb.db.collection(SEARCH_PROJECTION_COLLECTION);
    const until = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`not within 15 s: ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    // Its row is written stale (counted, and searches scan while it is there) ...
    await until('the refused row is written stale', async () =>
      Boolean(await rows.findOne({ _id: id as never, search_grams_version: 0 })),
    );
    expect(await rows.findOne({ _id: id as never })).toEqual({ _id: id, search_grams_version: 0 });
    expect(await countUnindexed(server.testDb.db)).toBe(1);
    await expectFound(rare, [id]);
    // ... and the feed goes on: a later write of another product gets its row.
    const other = await anyProductId();
    const after = word();
    await writer.products.updateOne({ _id: other } as Document, { $set: { name: `Card ${after}` } });
    await until('the next write gets its row', async () =>
      Boolean(await rows.findOne({ _id: other as never, name: `Card ${after}` })),
    );
    await expectFound(after, [other]);
    await writer.products.deleteOne({ _id: id } as Document);
    await expectFound(rare, []);
    expect(await countUnindexed(server.testDb.db)).toBe(0);
  });

  it('never answers the state before a write to a request sent after it: 30 writes, each read at once on both APIs', async () => {
    const id = await anyProductId();
    const doc = (await writer.products.findOne({ _id: id } as Document))!;
    let previous: string | undefined;
    for (let round = 0; round < 30; round++) {
      const now = word();
      await writer.products.updateOne({ _id: id } as Document, { $set: { name: `${doc.name} ${now}` } });
      const [newer, older] =
        round % 2 === 0
          ? [await restSearch(server, now), previous ? await graphqlSearch(server, previous) : undefined]
          : [await graphqlSearch(server, now), previous ? await restSearch(server, previous) : undefined];
      expect(newer, `round ${round}`).toEqual({ ids: [id], total: 1 });
      if (older) expect(older, `round ${round}`).toEqual({ ids: [], total: 0 });
      previous = now;
    }
  });

  it('a lone deletion leaves totals and categories at once; a re-insert of the same _id comes back', async () => {
    const category = 'Log Feed Deletions';
    const ids = [990_001, 990_002, 990_003];
    const template = (await writer.products.findOne({}))!;
    await writer.products.insertMany(
      ids.map((id) => ({
        ...template,
        _id: id,
        id,
        variant: { ...template.variant, id },
        name: `log feed ${id}`,
        category_name: category,
        category_key: category.toLowerCase(),
      })) as Document[],
    );
    const total = async () =>
      (
        (await (await server.request(`/api/v1/products?category=${category}`)).json()) as {
          meta: { total: number };
        }
      ).meta.total;
    const categoryCount = async () => {
      const reply = await server.graphql('{ categories { name productCount } }');
      const rows = (reply.body as { data: { categories: { name: string; productCount: number }[] } }).data
        .categories;
      return rows.find((row) => row.name === category)?.productCount ?? 0;
    };
    expect([await total(), await total(), await categoryCount()]).toEqual([3, 3, 3]);
    const [deleted] = ids;
    const removed = (await writer.products.findOneAndDelete({ _id: deleted } as Document))!;
    expect([await total(), await categoryCount()]).toEqual([2, 2]);
    await writer.products.insertOne(removed);
    expect([await total(), await categoryCount()]).toEqual([3, 3]);
  });
});

describe('a cached page follows a write without updated_at', () => {
  let cached: TestServer;
  beforeAll(async () => {
    cached = await startTestServer({ database: server.testDb, env: { RESPONSE_CACHE_TTL_MS: '60000' } });
  });
  afterAll(async () => {
    await cached?.close();
  });

  it('is purged before any request that starts after the write reads it', async () => {
    const id = await anyProductId();
    const page = async () => {
      const response = await cached.request(`/api/v1/products?per_page=100`);
      const body = (await response.json()) as { data: { id: number; name: string }[] };
      return { cache: response.headers.get('x-cache'), name: body.data.find((row) => row.id === id)?.name };
    };
    await page();
    expect((await page()).cache).toBe('HIT');
    for (let round = 0; round < 5; round++) {
      const name = `cached ${word()}`;
      await writer.products.updateOne({ _id: id } as Document, { $set: { name } });
      expect((await page()).name).toBe(name);
    }
  });

  it('a price change purges only the pages that hold the product, and keeps every total', async () => {
    let counts = 0;
    cached.database.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (JSON.stringify(event.command.pipeline ?? []).includes('"$group":{"_id":1,"n":{"$sum":1}}'))
        counts++;
    });
    const get = async (path: string) => {
      const response = await cached.request(path);
      const body = (await response.json()) as {
        data: { id: number; variant: { price: { amount: string } } }[];
      };
      return { cache: response.headers.get('x-cache'), body };
    };
    const holding = '/api/v1/products?per_page=2&page=1';
    const other = '/api/v1/products?per_page=2&page=3&category=Gift%20Cards';
    const changed = (await get(holding)).body.data[0]!;
    await get(other);
    expect([(await get(holding)).cache, (await get(other)).cache]).toEqual(['HIT', 'HIT']);
    counts = 0;
    const doc = (await writer.products.findOne({ id: changed.id }))!;
    await writer.products.updateOne(
      { _id: doc._id },
      { $set: { 'variant.price.amount': Number(changed.variant.price.amount) + 1 } },
    );
    const after = await get(holding);
    expect(after.cache).toBe('MISS');
    expect(after.body.data[0]!.variant.price.amount).toBe(String(Number(changed.variant.price.amount) + 1));
    expect((await get(other)).cache).toBe('HIT');
    // The holding page's total was kept, not counted again.
    expect(counts).toBe(0);
    // A rename keeps it in the lists it was in (and out of the others): the other page stays.
    await writer.products.updateOne({ _id: doc._id }, { $set: { name: `renamed ${word()}` } });
    expect((await get(other)).cache).toBe('HIT');
    // A category move shifts every page of the category it leaves or enters; totals move, uncounted.
    const inGiftCards = doc.category_key === 'gift cards';
    await writer.products.updateOne(
      { _id: doc._id },
      {
        $set: inGiftCards
          ? { category_name: 'Software', category_key: 'software' }
          : { category_name: 'Gift Cards', category_key: 'gift cards' },
      },
    );
    expect((await get(other)).cache).toBe('MISS');
    expect(counts).toBe(0);
  });

  it('drops every cached answer when its own reading of the log was cut (what it missed is unknown)', async () => {
    const id = await anyProductId();
    const page = async () => {
      const response = await cached.request(`/api/v1/products?per_page=100`);
      const body = (await response.json()) as { data: { id: number; name: string }[] };
      return body.data.find((row) => row.id === id)?.name;
    };
    await page();
    const sql = new pg.Client({ connectionString: cached.testDb.postgresUrl });
    await sql.connect();
    try {
      const ownReaders = async () =>
        (
          await sql.query<{ pid: number }>(
            'SELECT pid FROM pg_stat_replication WHERE application_name = $1',
            [logApplicationName(cached.testDb.dbName, 'own')],
          )
        ).rows.map((row) => row.pid);
      const cut = await ownReaders();
      expect(cut).toHaveLength(2); // both instances on this database
      await sql.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [cut]);
      // Committed while no slot of theirs reads the log: their new slots start after it.
      const name = `unseen ${word()}`;
      await writer.products.updateOne({ _id: id } as Document, { $set: { name } });
      const reopened = async () => (await ownReaders()).filter((pid) => !cut.includes(pid)).length === 2;
      const deadline = Date.now() + 10_000;
      while (!(await reopened()) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await reopened()).toBe(true);
      expect(await page()).toBe(name);
    } finally {
      await sql.end();
    }
  });
});
