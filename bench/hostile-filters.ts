/**
 * Issue 36, rows 11 and 12, as figures at 100,000 products: ordinary page-1 reads (4 clients, the
 * catalogue and known categories) alone, then beside 20 clients asking random unknown categories
 * (row 11), beside 20 clients of random 1–2-letter searches over 50 pages (row 12 widened), and
 * the database's CPU under one client's 1–2-letter searches on 4 connections (row 12 as found).
 *
 *   node --import tsx bench/hostile-filters.ts [--seconds 20] [--products 100000] [--set NAME=VALUE]…
 *
 * The server is `ours` in production mode (rate limits off, response cache off so every ordinary
 * page reads the database) on the bench's embedded database. Run from another checkout's folder
 * (e.g. `cd ../main && node --import tsx ../wt-h36b/bench/hostile-filters.ts`) to measure that
 * checkout's server on the same data: the server runs from the current folder.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { openBenchDatabase, type BenchDatabase } from './database';
import { totalCpuMs } from './proc';
import { BENCH_JWT_SECRET, startServerProcess, type SharedServerEnv } from './servers';

const DATA_DIR = path.join(import.meta.dirname, '.data');

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    products: { type: 'string', default: '100000' },
    set: { type: 'string', multiple: true, default: [] },
  },
});
const settings = Object.fromEntries(args.set.map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
const seconds = Number(args.seconds);
const SPEC = { seed: 36, products: Number(args.products), orders: 2_000 };
const log = (line: string) => console.log(line);

const LETTERS = [...'abcdefghijklmnopqrstuvwxyz'];
const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)]!;
const shortWord = () => pick(LETTERS) + (Math.random() < 0.5 ? '' : pick(LETTERS));

interface Tally {
  statuses: Map<number, number>;
  latencies: number[];
}

/** `clients` loops of `nextPath` until `until`; a refused request is retried after 50 ms. */
async function loop(origin: string, clients: number, until: number, nextPath: () => string): Promise<Tally> {
  const tally: Tally = { statuses: new Map(), latencies: [] };
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        let status = 0;
        try {
          const response = await fetch(`${origin}${nextPath()}`, { signal: AbortSignal.timeout(15_000) });
          await response.arrayBuffer();
          status = response.status;
        } catch {
          status = 0;
        }
        tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
        if (status === 200) tally.latencies.push(performance.now() - started);
        else await sleep(50);
      }
    }),
  );
  return tally;
}

function summary(tally: Tally): string {
  const sorted = [...tally.latencies].sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return `${(sorted.length / seconds).toFixed(1)}/s ok, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, statuses ${JSON.stringify(Object.fromEntries(tally.statuses))}`;
}

/** Ordinary reads beside `attack` (if any) for `seconds`; the database's CPU in % of a core. */
async function phase(
  db: BenchDatabase,
  origin: string,
  ordinary: () => string,
  attack?: { clients: number; path: () => string },
) {
  const pids = await db.serverPids();
  const cpuBefore = totalCpuMs(pids, true);
  const until = performance.now() + seconds * 1000;
  const [pages, hostile] = await Promise.all([
    loop(origin, 4, until, ordinary),
    attack ? loop(origin, attack.clients, until, attack.path) : undefined,
  ]);
  const cpu = ((totalCpuMs(pids, true) - cpuBefore) / (seconds * 1000)) * 100;
  return { pages, hostile, cpu };
}

const db = await openBenchDatabase({
  spec: SPEC,
  dbName: 'storefront_hostile_filters',
  dataDir: path.join(DATA_DIR, 'db'),
  log,
});
try {
  const categories = (await db.database.db.collection('products').distinct('category_name')) as string[];
  const env: SharedServerEnv = {
    MONGODB_URI: db.uri,
    MONGODB_DB: db.dbName,
    JWT_SECRET: BENCH_JWT_SECRET,
    PUBLIC_BASE_URL: 'http://127.0.0.1:4000',
  };
  const server = await startServerProcess('ours', {
    env,
    logDir: path.join(DATA_DIR, 'hostile-filters-logs'),
    extraEnv: { RESPONSE_CACHE_TTL_MS: '0', ...settings },
  });
  const ordinary = () =>
    Math.random() < 0.5
      ? '/api/v1/products?per_page=15'
      : `/api/v1/products?per_page=15&category=${encodeURIComponent(pick(categories))}`;
  const unknownCategory = () =>
    `/api/v1/products?per_page=15&category=nosuch${Math.random().toString(36).slice(2)}`;
  const shortSearch = () =>
    `/api/v1/products/search?per_page=15&term=${shortWord()}&page=${1 + Math.floor(Math.random() * 50)}`;
  try {
    log(
      `${db.seed.products} products, ${categories.length} categories, ${seconds} s a phase, cwd ${process.cwd()}, settings ${JSON.stringify(settings)}`,
    );
    // Warm: the plans, the gram sample, the known categories' totals.
    await phase(db, server.origin, ordinary);
    const report = (name: string, result: Awaited<ReturnType<typeof phase>>) =>
      log(
        `${name}: ordinary ${summary(result.pages)}${result.hostile ? `; hostile ${summary(result.hostile)}` : ''}; database ${Math.round(result.cpu)} % of a core`,
      );
    report('alone', await phase(db, server.origin, ordinary));
    report(
      'row 11, 20 clients of unknown categories',
      await phase(db, server.origin, ordinary, { clients: 20, path: unknownCategory }),
    );
    report(
      'row 12, 20 clients of 1–2-letter searches',
      await phase(db, server.origin, ordinary, { clients: 20, path: shortSearch }),
    );
    const one = await phase(db, server.origin, () => shortSearch());
    log(
      `row 12, one client of 1–2-letter searches on 4 connections: ${summary(one.pages)}; database ${Math.round(one.cpu)} % of a core`,
    );
  } finally {
    await server.stop();
  }
} finally {
  await db.stop();
}
