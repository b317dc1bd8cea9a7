import { parseArgs } from 'node:util';
import { MongoClient, type Document } from 'mongodb';
import { loadConfig } from '../src/config';
import { openChangeFeed } from '../src/db/change-feed';
import { DATES, pastFilter, TEXTS } from '../src/db/feed/range';
import { createProductRepository } from '../src/db/catalog/product-repository';
import { statesComplete } from '../src/db/derived/search-state';
import { createTotalCache } from '../src/db/catalog/total-cache';
import { createLogger } from '../src/logger';
import { startServer, type RunningServer } from '../src/server';
import { median } from './median';
import { feedAtRate } from './feed-rate';
import { currentRows } from './projection';
import { descendants, loadText, totalCpuMs } from './proc';

const USAGE = `Usage: node --import tsx bench/outside-writes.ts --uri URI --db NAME --db-pid PID [--writes N]
       [--rate N --seconds S] [--idle-only --idle-seconds S] [--visible-only]
       [--postgres-url URL] [--unstamped]

What following other writers costs and how soon it shows (docs/benchmarks.md, "Following other
writers"), against a seeded database another process serves (npm run db; its pid for the
database's CPU):
  - the feed's idle cost: each of its idle reads (dates, text dates) timed alone; the database's
    CPU over 20 s with no server, then with one polling;
  - write → visible: an outside rename, then the time until a search finds it, until its grams
    are current, until a cached page shows it, and until a filter's total moves;
  - searches with nothing pending and right after 10 outside writes (feed held back a minute);
  - pages 2-6 of a category: page + count each (before) against page + the kept total (after).
With --rate, only the feed under N outside writes a second for S seconds (default 20), see
bench/feed-rate.ts: the database's CPU without and with a server following, the feed's lag,
write → grams current, and one probe a second for write → search-visible / cache-purged / total.
With --idle-only, only the feed's idle cost, over --idle-seconds (default 20; longer takes in the
deletion counts, which at 1,000,000 products come every ~100 s), and the server's start time.
With --postgres-url (npm run db prints it) every server it starts reads the engine's log; without,
they poll \`updated_at\` (they are given only the MongoDB URI): run it both ways to compare.
With --visible-only, only the idle cost and write → visible (the parts that mean the same under
the log and under polling). With --unstamped the writes of "write → visible" leave \`updated_at\` alone (polling never sees
them: each such timing is "—", past its 10 s bound).
CHANGE_FEED_RECONCILE_MS in the environment is passed to the servers it starts.`;

const { values } = parseArgs({
  options: {
    uri: { type: 'string' },
    db: { type: 'string' },
    'db-pid': { type: 'string' },
    writes: { type: 'string', default: '20' },
    rate: { type: 'string' },
    seconds: { type: 'string', default: '20' },
    'idle-only': { type: 'boolean' },
    'idle-seconds': { type: 'string', default: '20' },
    'postgres-url': { type: 'string' },
    unstamped: { type: 'boolean' },
    'visible-only': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help || !values.uri || !values.db || !values['db-pid']) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}
const uri = values.uri;
const dbName = values.db;
const WRITES = Number(values.writes);
const RATE = values.rate === undefined ? undefined : Number(values.rate);
const SECONDS = Number(values.seconds);
const IDLE_SECONDS = Number(values['idle-seconds']);
for (const [name, value, max] of [
  ['--idle-seconds', IDLE_SECONDS, 3_600],
  ['--writes', WRITES, 1_000],
  ['--rate', RATE ?? 1, 1_000],
  ['--seconds', SECONDS, 600],
] as const) {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    console.error(`${name} must be a whole number from 1 to ${max}\n\n${USAGE}`);
    process.exit(2);
  }
}
/** What a write sets beside its change: `updated_at` now, or (--unstamped) nothing, as a shell fix would. */
const stamp = (): Document => (values.unstamped ? {} : { updated_at: new Date() });
const dbPids = async () => descendants(Number(values['db-pid']));

const logger = createLogger('warn');
const serverWith = (env: Record<string, string>) =>
  startServer({
    config: loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      MONGODB_URI: uri,
      MONGODB_DB: dbName,
      JWT_SECRET: 'bench-secret-of-at-least-32-characters-000',
      SEED_FIXTURES: 'false',
      LOG_LEVEL: 'warn',
      REQUEST_LOG: 'off',
      // The one setting taken from the environment: what the deletion count costs at 1M (docs).
      ...(process.env.CHANGE_FEED_RECONCILE_MS
        ? { CHANGE_FEED_RECONCILE_MS: process.env.CHANGE_FEED_RECONCILE_MS }
        : {}),
      // With --postgres-url the servers read the engine's log; without, they poll `updated_at`.
      ...(values['postgres-url'] ? { CHANGE_FEED_POSTGRES_URL: values['postgres-url'] } : {}),
      ...env,
    }),
    logger,
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (value: number) => value.toFixed(1);
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function json(server: RunningServer, path: string): Promise<{ body: Document; cache: string | null }> {
  const response = await fetch(`${server.url}${path}`);
  return { body: (await response.json()) as Document, cache: response.headers.get('x-cache') };
}

/** Milliseconds from `since` until `check` holds (polled every 20 ms, at most 10 s). */
async function until(since: number, check: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - since;
    if (performance.now() - since > 10_000) return Number.NaN;
    await sleep(20);
  }
}

async function idleCost(): Promise<void> {
  const window = IDLE_SECONDS * 1_000;
  const measure = async () => {
    const pids = await dbPids();
    const before = totalCpuMs(pids, true);
    await sleep(window);
    return ((totalCpuMs(pids, true) - before) / window) * 100;
  };
  const bare = await measure();
  const starting = performance.now();
  const server = await serverWith({ RESPONSE_CACHE_TTL_MS: '0' });
  console.log(`server started in ${ms(performance.now() - starting)} ms`);
  await sleep(2_000);
  const polled = await measure();
  await server.close();
  console.log(
    `feed idle over ${IDLE_SECONDS} s: database CPU ${bare.toFixed(2)} % of a core without a server, ${polled.toFixed(2)} % with one ${values['postgres-url'] ? 'reading the log' : 'polling every second'} (+${(polled - bare).toFixed(2)})`,
  );
}

/** Each of the poll's idle reads (one per kind of `updated_at` followed), as the feed sends it. */
async function feedReads(products: import('mongodb').Collection<Document>): Promise<void> {
  for (const bracket of [DATES, TEXTS]) {
    const runs: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      await products
        .find(pastFilter(bracket, { at: bracket.at(Date.now()), idsAt: [] }), { comment: 'change feed' })
        .sort({ updated_at: 1, _id: 1 })
        .limit(500)
        .toArray();
      runs.push(performance.now() - started);
    }
    console.log(
      `feed idle read of ${bracket.name} stamps: median ${ms(median(runs))} ms round trip (n=200), ${(median(runs) / 10).toFixed(2)} % of a core at one a second`,
    );
  }
}

async function writeToVisible(products: import('mongodb').Collection<Document>): Promise<void> {
  const cached = await serverWith({ RESPONSE_CACHE_TTL_MS: '60000' });
  const uncached = await serverWith({ RESPONSE_CACHE_TTL_MS: '0' });
  const first = (await products.find({ category_key: 'gift cards' }).sort({ _id: 1 }).limit(1).next())!;
  const page = '/api/v1/products?category=Gift%20Cards&per_page=15';
  const timings = {
    search: [] as number[],
    grams: [] as number[],
    purge: [] as number[],
    total: [] as number[],
  };
  for (let round = 0; round < WRITES; round++) {
    const word = `zqvx${round}${Date.now().toString(36)}`;
    await json(cached, page);
    await json(uncached, `${page}&page=2`);
    const totalBefore = (await json(uncached, `${page}&page=2`)).body.meta.total as number;
    const started = performance.now();
    await products.updateOne({ _id: first._id }, { $set: { name: `${word} Gift Card`, ...stamp() } });
    const search = until(
      started,
      async () => (await json(uncached, `/api/v1/products?search=${word}`)).body.meta.total === 1,
    );
    const grams = until(started, async () => {
      const doc = await products.findOne({ _id: first._id });
      return doc !== null && (await currentRows(client.db(dbName), [doc])).has(doc._id);
    });
    const purge = until(started, async () => JSON.stringify((await json(cached, page)).body).includes(word));
    timings.search.push(await search);
    timings.grams.push(await grams);
    timings.purge.push(await purge);
    // A product leaves the category: the kept total must move.
    const moved = performance.now();
    await products.updateOne({ _id: first._id }, { $set: { category_key: 'elsewhere', ...stamp() } });
    timings.total.push(
      await until(
        moved,
        async () => (await json(uncached, `${page}&page=2`)).body.meta.total === totalBefore - 1,
      ),
    );
    await products.updateOne({ _id: first._id }, { $set: { category_key: 'gift cards', ...stamp() } });
    await sleep(1_500);
  }
  await cached.close();
  await uncached.close();
  for (const [name, values] of Object.entries(timings))
    console.log(
      `write → ${name}: p50 ${ms(percentile(values, 50))} ms, p99 ${ms(percentile(values, 99))} ms (n=${values.length})`,
    );
}

async function searchesPending(products: import('mongodb').Collection<Document>): Promise<void> {
  // The feed reads once a minute: the written products stay pending for the whole measurement.
  const server = await serverWith({ RESPONSE_CACHE_TTL_MS: '0', CHANGE_FEED_INTERVAL_MS: '60000' });
  // Kept totals are adjusted by the before-images only once they are complete (the first start backfills them).
  const waitedFrom = performance.now();
  while (!(await statesComplete(products.db))) {
    if (performance.now() - waitedFrom > 300_000)
      throw new Error('the before-images were not backfilled in 5 min');
    await sleep(500);
  }
  console.log(`before-images complete (waited ${ms(performance.now() - waitedFrom)} ms for the backfill)`);
  const terms = ['food', 'gift', 'soundwave', 'nebula'];
  const time = async (term: string) => {
    const started = performance.now();
    await json(server, `/api/v1/products/search?term=${term}&per_page=15&page=2`);
    return performance.now() - started;
  };
  const measure = async () => {
    const result: Record<string, number> = {};
    for (const term of terms) {
      await time(term);
      const runs: number[] = [];
      for (let i = 0; i < 7; i++) runs.push(await time(term));
      result[term] = median(runs);
    }
    return result;
  };
  // The same page and count through the repository, totals never kept: the pending path alone.
  const position = { date: new Date(), text: new Date().toISOString().slice(0, 19).replace('T', ' ') };
  const repository = createProductRepository(products.db, {
    feed: {
      mode: 'poll',
      handedOn: async () => true,
      handledBefore: () => position,
      hasUnhandled: async () => true,
    },
  });
  const direct = async () => {
    const result: Record<string, number> = {};
    for (const term of terms) {
      const runs: number[] = [];
      for (let i = 0; i < 8; i++) {
        const started = performance.now();
        await Promise.all([
          repository.findPage({ words: [term] }, 15, 15),
          repository.count({ words: [term] }),
        ]);
        if (i > 0) runs.push(performance.now() - started);
      }
      result[term] = median(runs);
    }
    return result;
  };
  const none = await measure();
  const noneDirect = await direct();
  const some = await products.find().sort({ _id: -1 }).limit(10).toArray();
  for (const doc of some)
    await products.updateOne(
      { _id: doc._id },
      { $set: { name: `${doc.name as string} Food`, updated_at: new Date() } },
    );
  const pending = await measure();
  const pendingDirect = await direct();
  await server.close();
  for (const term of terms)
    console.log(
      `repository "${term}" page 2 + count, totals not kept: ${ms(noneDirect[term]!)} ms with nothing pending, ${ms(pendingDirect[term]!)} ms with 10 pending (×${(pendingDirect[term]! / noneDirect[term]!).toFixed(2)})`,
    );
  for (const term of terms)
    console.log(
      `search "${term}" page 2: ${ms(none[term]!)} ms with nothing pending, ${ms(pending[term]!)} ms with 10 products written since the feed's last read (×${(pending[term]! / none[term]!).toFixed(2)})`,
    );
}

async function laterPages(client: MongoClient): Promise<void> {
  const db = client.db(dbName);
  const criteria = { words: [], category: 'Gift Cards' };
  const feed = await openChangeFeed(db, 'products', {
    intervalMs: 1_000,
    batchSize: 500,
    reconcileMs: 10_000,
    lookBackMs: 5_000,
  });
  const plain = createProductRepository(db);
  // Each page asks the feed whether anything is unhandled (one indexed query), then takes the kept total.
  const kept = createProductRepository(db, { feed, totals: createTotalCache() });
  const pages = async (repository: typeof plain) => {
    await repository.findPage(criteria, 0, 15);
    await repository.count(criteria);
    const runs: number[] = [];
    for (let page = 2; page <= 6; page++) {
      const started = performance.now();
      await Promise.all([repository.findPage(criteria, (page - 1) * 15, 15), repository.count(criteria)]);
      runs.push(performance.now() - started);
    }
    return median(runs);
  };
  const before: number[] = [];
  const after: number[] = [];
  for (let round = 0; round < 3; round++) {
    before.push(await pages(plain));
    after.push(await pages(kept));
  }
  console.log(
    `pages 2-6 of category=Gift Cards (page + total): ${ms(median(before))} ms counting each page → ${ms(median(after))} ms with the kept total`,
  );
}

const client = await MongoClient.connect(uri);
const products = client.db(dbName).collection<Document>('products');
console.log(`${await products.estimatedDocumentCount()} products; load ${loadText()}`);
if (RATE !== undefined) {
  await feedAtRate({
    db: client.db(dbName),
    products,
    rate: RATE,
    seconds: SECONDS,
    databaseCpuMs: async () => totalCpuMs(await dbPids(), true),
    startServer: () => serverWith({ RESPONSE_CACHE_TTL_MS: '60000' }),
  });
} else if (values['idle-only']) {
  await feedReads(products);
  await idleCost();
} else if (values['visible-only']) {
  await idleCost();
  await writeToVisible(products);
} else {
  await feedReads(products);
  await idleCost();
  await laterPages(client);
  await searchesPending(products);
  await writeToVisible(products);
}
console.log(`load ${loadText()}`);
await client.close();
