import { parseArgs } from 'node:util';
import { MongoClient, type Document } from 'mongodb';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { startServer } from '../src/server';
import pg from 'pg';
import { lastingSlotName } from '../src/db/feed/log';
import { loadText } from './proc';
import { percentile } from './median';

const USAGE = `Usage: node --import tsx bench/bulk-update.ts --uri URI --db NAME [--postgres-url URL] [--products N]

Issue 35: an owner's bulk update under a running gateway. One server follows the database (the
engine's log with --postgres-url, else polling); a reader asks for random REST product pages the
whole time, and another searches for a common word; the owner runs an updateMany of the first N products' short_description (searched
text: the grams follow), twice in a row. Prints each updateMany's time and error, and the reads'
p50/p99 while quiet, during the updates and after, and how long the grams took to follow.`;

const { values } = parseArgs({
  options: {
    uri: { type: 'string' },
    db: { type: 'string' },
    'postgres-url': { type: 'string' },
    products: { type: 'string', default: '20000' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help || !values.uri || !values.db) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}
const COUNT = Number(values.products);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const server = await startServer({
  config: loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    MONGODB_URI: values.uri,
    MONGODB_DB: values.db,
    JWT_SECRET: 'bench-secret-of-at-least-32-characters-000',
    SEED_FIXTURES: 'false',
    LOG_LEVEL: 'warn',
    REQUEST_LOG: 'off',
    RESPONSE_CACHE_TTL_MS: '0',
    ...(values['postgres-url'] ? { CHANGE_FEED_POSTGRES_URL: values['postgres-url'] } : {}),
  }),
  logger: createLogger('warn'),
});
const client = await MongoClient.connect(values.uri);
const products = client.db(values.db).collection<Document>('products');
/**
 * A lasting slot left behind by an earlier run (its holder stopped with rows unwritten) is caught
 * up first: an instance cannot know which rows that backlog holds (it began before its own
 * channel), so its searches would scan until then, whatever this run measures.
 */
async function holderCaughtUp(postgresUrl: string, timeoutMs = 600_000): Promise<void> {
  const sql = new pg.Client({ connectionString: postgresUrl });
  await sql.connect();
  const started = performance.now();
  for (;;) {
    const { rows } = await sql.query<{ behind: string | null }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::text AS behind
         FROM pg_replication_slots WHERE slot_name = $1`,
      [lastingSlotName(values.db!)],
    );
    const behind = Number(rows[0]?.behind ?? Infinity);
    if (behind < 1 << 20 || performance.now() - started > timeoutMs) {
      console.log(
        `slot holder ${(behind / 2 ** 20).toFixed(1)} MB behind after ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
      break;
    }
    await sleep(1_000);
  }
  await sql.end();
}
if (values['postgres-url']) await holderCaughtUp(values['postgres-url']);
let phase = 'quiet';
const reads = new Map<string, number[]>();
let reading = true;
/** One client asking for `path()` one request at a time, its times kept per phase under `kind`. */
const readLoop = (kind: string, path: () => string) =>
  (async () => {
    while (reading) {
      const started = performance.now();
      await fetch(`${server.url}${path()}`).then((r) => r.text());
      const list = reads.get(`${kind} ${phase}`) ?? [];
      list.push(performance.now() - started);
      reads.set(`${kind} ${phase}`, list);
    }
  })();
const readers = [
  readLoop('pages', () => `/api/v1/products?page=${1 + Math.floor(Math.random() * 500)}`),
  // A word of 1.4 % of a generated catalogue, past its first pages: read through the grams where they can serve it.
  readLoop('searches', () => `/api/v1/products/search?term=basic&page=${3 + Math.floor(Math.random() * 5)}`),
];
console.log(`${await products.estimatedDocumentCount()} products; load ${loadText()}`);
await sleep(5_000);
for (const round of [1, 2]) {
  phase = `during updateMany ${round}`;
  const started = performance.now();
  const word = `bulkword${round}x${Date.now().toString(36)}`;
  try {
    const result = await products.updateMany({ _id: { $lte: COUNT } } as Document, {
      $set: { short_description: `Bulk edit ${word}` },
    });
    console.log(
      `updateMany ${round}: ${result.modifiedCount} modified in ${(performance.now() - started).toFixed(0)} ms`,
    );
  } catch (error) {
    console.log(
      `updateMany ${round}: failed after ${(performance.now() - started).toFixed(0)} ms: ${(error as Error).message}`,
    );
  }
  phase = `after updateMany ${round}`;
  const followed = performance.now();
  for (;;) {
    const response = await fetch(`${server.url}/api/v1/products/search?term=${word}&per_page=1`);
    const total = ((await response.json()) as { meta?: { total: number } }).meta?.total;
    if (total === COUNT || performance.now() - followed > 120_000) break;
    await sleep(200);
  }
  console.log(
    `  search finds all ${COUNT} by the new word ${(performance.now() - followed).toFixed(0)} ms after the update returned`,
  );
}
await sleep(5_000);
reading = false;
await Promise.all(readers);
for (const [name, list] of reads) {
  const sorted = [...list].sort((a, b) => a - b);
  console.log(
    `${name}: p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms (n=${list.length})`,
  );
}
const metrics = await (await fetch(`${server.url}/metrics`)).text();
for (const line of metrics.split('\n'))
  if (/^(product_search_scans_total|kept_totals_counted_total)\{/.test(line)) console.log(line);
console.log(`load ${loadText()}`);
await client.close();
await server.close();
