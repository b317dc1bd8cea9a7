import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import type { Db, Document } from 'mongodb';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/engine';
import type { OrderDoc } from '../src/db/documents';
import { connectDatabase, ensureIndexes, type Database } from '../src/db/mongo';
import { productFilter } from '../src/db/catalog/product-plans';
import { criteriaFor } from '../src/catalog/product-query';
import { loadGenerated } from '../seed/load';
import { medianTime as timed } from './median';
import { measureSearch } from './search-rows';
import { BENCH_JWT_SECRET, startServerProcess, type ServerProcess } from './servers';

const USAGE = `Usage: npm run bench:scale -- [options]

Loads generated data at each size, then times UNCACHED requests (response cache off) through one
running server, one at a time, and prints a table of medians per size. Each size replaces the data.

  --sizes P:O,…     Products:orders per step (default 100000:200000,1000000:1000000)
  --samples N       Timed requests per row, after 2 untimed ones (default 15)
  --seed S          Generator seed (default 42)
  --batch-size B    Documents per insert (default 5000)
  --reuse           Keep data already loaded at exactly this size (no reload)
  --rows R          all (default) or search (issue 20's search rows only)
  --db NAME         The database (default storefront_scale); with --reuse, one loaded by npm run seed
                    With CHANGE_FEED_POSTGRES_URL the server follows the engine's log: the run
                    starts once it holds its slot (after a first start's resync), and says when
  -h, --help        This help

The database is the embedded one in bench/.data/scale (or MONGODB_URI). The count's share of a
list request is the median of the same count sent alone through the driver, over the request's
median. Results also go to bench/results/scale-<timestamp>.json.`;

const PER_PAGE = 15;
/** /metrics of the production server (to see when it follows the log). */
const METRICS_TOKEN = 'bench-scale-metrics-token-0000000000';
const log = (line: string) => console.error(`[scale] ${line}`);

interface Size {
  products: number;
  orders: number;
}

interface Row {
  name: string;
  /** The issue's bound in ms, where it sets one for this size. */
  target?: number;
  medianMs: number;
  /** The count alone (driver round trip), where the request counts. */
  countMs?: number;
}

interface Step extends Size {
  docsPerSecond: number;
  loadSeconds: number;
  rows: Row[];
}

function parseSizes(raw: string): Size[] {
  return raw.split(',').map((part) => {
    const [products, orders] = part.split(':').map((value) => Number(value.replace(/_/g, '')));
    if (!Number.isSafeInteger(products) || !Number.isSafeInteger(orders) || products! < 1 || orders! < 1)
      throw new Error(`--sizes: "${part}" is not products:orders`);
    return { products: products!, orders: orders! };
  });
}

async function fetchOk(url: string, init?: RequestInit): Promise<void> {
  const response = await fetch(url, init);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body.slice(0, 200)}`);
  if (body.includes('"errors"')) throw new Error(`${url}: ${body.slice(0, 300)}`);
}

function token(subject: string, scope?: string): Promise<string> {
  return new SignJWT(scope ? { scope } : {})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('12h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
}

async function measureStep(db: Db, origin: string, size: Size, samples: number): Promise<Row[]> {
  const large = size.products >= 1_000_000;
  const order = await db
    .collection<OrderDoc>('orders')
    .findOne({ id: Math.ceil(size.orders / 2) }, { projection: { _id: 0 } });
  if (!order) throw new Error('no order in the middle of the data');
  const customer = { authorization: `Bearer ${await token(order.customer_id)}` };
  const products = db.collection('products');
  const count = (filter: Document) => timed(() => products.countDocuments(filter), samples);
  const rest = (query: string) => () => fetchOk(`${origin}/api/v1/products${query}`);
  const graphql =
    (query: string, headers: Record<string, string> = {}) =>
    () =>
      fetchOk(`${origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query }),
      });
  const deepPages = large ? [3000, 30_000, 60_000] : [3000];
  const lastPage = Math.ceil(size.products / PER_PAGE);

  const rows: Row[] = [];
  const add = async (name: string, run: () => Promise<void>, target?: number, countOf?: Document) => {
    let medianMs: number;
    try {
      medianMs = await timed(run, samples);
    } catch (error) {
      // A request past MONGODB_TIMEOUT_MS answers 503: the row records it, the run goes on.
      log(`${name}: ${(error as Error).message.slice(0, 120)}`);
      rows.push({ name, medianMs: Number.NaN, ...(target === undefined ? {} : { target }) });
      return;
    }
    const countMs = countOf ? await count(countOf) : undefined;
    rows.push({
      name,
      medianMs,
      ...(target === undefined ? {} : { target }),
      ...(countMs === undefined ? {} : { countMs }),
    });
    log(
      `${name}: ${medianMs.toFixed(1)} ms${countMs === undefined ? '' : ` (count alone ${countMs.toFixed(1)} ms)`}`,
    );
  };
  const filterOf = (search?: string, category?: string) => productFilter(criteriaFor(search, category));

  await add('GET /api/v1/products', rest(''), large ? undefined : 15, filterOf());
  for (const page of deepPages.filter((page) => page <= lastPage))
    await add(`?page=${page}`, rest(`?page=${page}`), large || page !== 3000 ? undefined : 40, filterOf());
  await add(
    '?category=Gift Cards',
    rest('?category=Gift%20Cards'),
    large ? 40 : 15,
    filterOf(undefined, 'Gift Cards'),
  );
  await add('?search=gift', rest('?search=gift'), large ? undefined : 80, filterOf('gift'));
  await add(
    '/search?term=gift',
    () => fetchOk(`${origin}/api/v1/products/search?term=gift`),
    large ? undefined : 80,
    filterOf('gift'),
  );
  await add(
    `GET /api/v1/orders/{ulid}`,
    () => fetchOk(`${origin}/api/v1/orders/${order.ulid}`, { headers: customer }),
    5,
  );
  await add(
    'viewer { orders(first: 10) }',
    graphql(
      '{ viewer { orders(first: 10) { edges { node { ulid total { amount } items { productName } } } } } }',
      customer,
    ),
    10,
  );
  await add('categories', graphql('{ categories { name productCount } }'), large ? undefined : 150);
  return rows;
}

async function loadedSize(db: Db, size: Size): Promise<boolean> {
  const [products, orders] = await Promise.all([
    db.collection('products').countDocuments({}),
    db.collection('orders').countDocuments({}),
  ]);
  return products === size.products && orders === size.orders;
}

/**
 * With CHANGE_FEED_POSTGRES_URL (the feed reads the log), waits until the server holds its lasting
 * slot: on a database's first start that is after its resync (the search projection of every
 * product read and compared), during which searches scan; says how long it took.
 */
async function untilFollowing(origin: string): Promise<void> {
  if (!process.env.CHANGE_FEED_POSTGRES_URL) return;
  const started = performance.now();
  for (;;) {
    const metrics = await fetch(`${origin}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    const text = await metrics.text().catch(() => '');
    if (/^change_feed_log_leading 1$/m.test(text)) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`following the log ${((performance.now() - started) / 1000).toFixed(1)} s after the server listened`);
}

async function measureRows(
  which: string,
  db: Db,
  origin: string,
  size: Size,
  samples: number,
): Promise<Row[]> {
  const rows = which === 'search' ? [] : await measureStep(db, origin, size, samples);
  const large = size.products >= 1_000_000;
  const search = await measureSearch(db, origin, (run) => timed(run, samples), log);
  return [...rows, ...search.map((row) => (large ? row : { name: row.name, medianMs: row.medianMs }))];
}

function table(steps: Step[]): string {
  const names = [...new Set(steps.flatMap((step) => step.rows.map((row) => row.name)))];
  const header = ['request', ...steps.map((step) => `${step.products / 1000}k / ${step.orders / 1000}k`)];
  const lines = [`| ${header.join(' | ')} |`, `|---|${steps.map(() => '--:').join('|')}|`];
  for (const name of names) {
    const cells = steps.map((step) => {
      const row = step.rows.find((candidate) => candidate.name === name);
      if (!row) return '';
      if (Number.isNaN(row.medianMs)) return 'failed (503)';
      const bound =
        row.target === undefined ? '' : ` (≤ ${row.target}${row.medianMs <= row.target ? ' ✓' : ' ✗'})`;
      const share = row.countMs === undefined ? '' : `, count ${row.countMs.toFixed(1)}`;
      return `${row.medianMs.toFixed(1)}${bound}${share}`;
    });
    lines.push(`| ${name} | ${cells.join(' | ')} |`);
  }
  lines.push(`| load, documents/s | ${steps.map((step) => String(step.docsPerSecond)).join(' | ')} |`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '100000:200000,1000000:1000000' },
      samples: { type: 'string', default: '15' },
      seed: { type: 'string', default: '42' },
      'batch-size': { type: 'string', default: '5000' },
      reuse: { type: 'boolean', default: false },
      rows: { type: 'string', default: 'all' },
      db: { type: 'string', default: 'storefront_scale' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const sizes = parseSizes(values.sizes);
  const samples = Number(values.samples);
  const seed = Number(values.seed);
  const batchSize = Number(values['batch-size']);
  const DB_NAME = values.db;

  let embedded: EmbeddedDatabase | undefined;
  let database: Database | undefined;
  let server: ServerProcess | undefined;
  try {
    let uri = process.env.MONGODB_URI;
    if (!uri) {
      embedded = await startEmbeddedDatabase({
        dataDir: path.join('bench', '.data', 'scale'),
        throwaway: true,
        log,
      });
      uri = embedded.uri;
    }
    database = await connectDatabase({ uri, dbName: DB_NAME, socketTimeoutMS: 600_000 });
    await ensureIndexes(database.db);
    server = await startServerProcess('ours', {
      // A slow request is measured, not answered 503 at the default 3 s (a scan's count at 1M).
      env: {
        MONGODB_URI: uri,
        MONGODB_DB: DB_NAME,
        JWT_SECRET: BENCH_JWT_SECRET,
        PUBLIC_BASE_URL: 'http://127.0.0.1:4000',
        MONGODB_TIMEOUT_MS: '60000',
        METRICS_TOKEN: METRICS_TOKEN,
      },
      logDir: path.join('bench', '.data', 'scale-logs'),
    });
    await untilFollowing(server.origin);
    const steps: Step[] = [];
    for (const size of sizes) {
      if (values.reuse && (await loadedSize(database.db, size))) {
        log(`reusing ${size.products} products and ${size.orders} orders`);
        const rows = await measureRows(values.rows, database.db, server.origin, size, samples);
        steps.push({ ...size, docsPerSecond: 0, loadSeconds: 0, rows });
        continue;
      }
      log(`loading ${size.products} products and ${size.orders} orders …`);
      let lastPercent = -10;
      const result = await loadGenerated(database.db, {
        seed,
        ...size,
        batchSize,
        onProgress: (progress) => {
          const percent = Math.floor((progress.overallDone / progress.overallTotal) * 100);
          if (percent >= lastPercent + 10) {
            lastPercent = percent;
            log(`  ${percent}%`);
          }
        },
      });
      const docsPerSecond = Math.round(result.docsPerSecond);
      log(`loaded in ${(result.elapsedMs / 1000).toFixed(1)} s: ${docsPerSecond} documents/s`);
      const rows = await measureRows(values.rows, database.db, server.origin, size, samples);
      steps.push({ ...size, docsPerSecond, loadSeconds: Math.round(result.elapsedMs / 1000), rows });
    }
    const output = table(steps);
    console.log(
      `Uncached medians in ms (${samples} sequential requests each, response cache off); ` +
        '"count" = the same count alone through the driver.\n\n' +
        output,
    );
    const file = path.join(
      'bench',
      'results',
      `scale-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    );
    await writeFile(file, JSON.stringify({ seed, samples, steps }, null, 2));
    log(`wrote ${file}`);
  } finally {
    await server?.stop();
    await database?.close().catch(() => undefined);
    await embedded?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
