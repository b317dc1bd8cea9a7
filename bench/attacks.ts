/**
 * Issue 21, rows 5 and 6, as figures: time to recover after three attacks that leave work behind,
 * goodput of uncached searches at 1, 8, 16 and 50 clients, and a stampede on one hot cached page.
 *
 *   node --import tsx bench/attacks.ts [--only attacks|goodput|stampede] [--seconds 8] [--set NAME=VALUE]…
 *
 * The server runs as a child process (NODE_ENV=production, response cache off except for the
 * stampede) on the bench's embedded database with 2,020 products (or MONGODB_URI). "Recovered" is
 * the first moment after the attacking client has gone from which `/readyz` and one order lookup
 * both answer 200 within a second, three probes in a row.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT } from 'jose';
import { openBenchDatabase } from './database';
import {
  aliasAttack,
  pipelineAttack,
  resetAttack,
  timeToRecover,
  uniqueTerm,
  type Target,
} from '../test/support/attacks';
import { BENCH_JWT_SECRET, startServerProcess, type ServerProcess, type SharedServerEnv } from './servers';

const DATA_DIR = path.join(import.meta.dirname, '.data');
const SPEC = { seed: 21, products: 2_020, orders: 2_000 };

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    seconds: { type: 'string', default: '8' },
    /** A server setting for this run, e.g. --set MONGODB_MAX_CONCURRENT_QUERIES=2. */
    set: { type: 'string', multiple: true, default: [] },
  },
});
const settings = Object.fromEntries(args.set.map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
const phaseSeconds = Number(args.seconds);
const log = (line: string) => console.log(line);

/** Row 5, goodput: `clients` loops of uncached REST searches for `seconds`; 200s per second. */
async function goodput(target: Target, clients: number, seconds: number) {
  const until = performance.now() + seconds * 1000;
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const status = await probeWithin(
          `${target.origin}/api/v1/products/search?term=${uniqueTerm()}&per_page=15`,
          10_000,
        );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 200) latencies.push(performance.now() - started);
        // A refused request is retried after a short pause, as a client honouring Retry-After would not.
        if (status !== 200) await sleep(50);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    perSecond: (statuses.get(200) ?? 0) / seconds,
    statuses: Object.fromEntries(statuses),
    p50Ms: Math.round(latencies[Math.floor(latencies.length / 2)] ?? NaN),
  };
}

async function probeWithin(url: string, timeoutMs: number): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/**
 * Row 6: 20 clients on one hot page whose entry expires every 2 s (RESPONSE_CACHE_TTL_MS). How
 * many answers are 503, the longest run of seconds with no 200, and how often the entry was hit.
 */
async function stampede(target: Target, seconds: number) {
  const page = `${target.origin}/api/v1/products?per_page=100&search=a`;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  const okSeconds = new Set<number>();
  const counts = { ok: 0, hit: 0, unavailable: 0, other: 0 };
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (performance.now() < until) {
        try {
          const response = await fetch(page, { signal: AbortSignal.timeout(10_000) });
          await response.arrayBuffer();
          if (response.status === 200) {
            counts.ok++;
            if (response.headers.get('x-cache') === 'HIT') counts.hit++;
            okSeconds.add(Math.floor((performance.now() - started) / 1000));
          } else if (response.status === 503) counts.unavailable++;
          else counts.other++;
        } catch {
          counts.other++;
        }
      }
    }),
  );
  let longestGap = 0;
  let gap = 0;
  for (let second = 0; second < seconds; second++) {
    gap = okSeconds.has(second) ? 0 : gap + 1;
    longestGap = Math.max(longestGap, gap);
  }
  const total = counts.ok + counts.unavailable + counts.other;
  return { ...counts, total, unavailablePercent: Math.round((counts.unavailable / total) * 100), longestGap };
}

async function withServer<T>(
  env: SharedServerEnv,
  extraEnv: Record<string, string>,
  target: Omit<Target, 'origin'>,
  run: (target: Target) => Promise<T>,
): Promise<T> {
  const server: ServerProcess = await startServerProcess('ours', {
    env,
    logDir: path.join(DATA_DIR, 'attacks-logs'),
    extraEnv: { ...settings, ...extraEnv },
  });
  try {
    return await run({ ...target, origin: server.origin });
  } finally {
    await server.stop();
  }
}

const db = await openBenchDatabase({
  spec: SPEC,
  dbName: 'storefront_attacks',
  dataDir: path.join(DATA_DIR, 'db'),
  log,
});
try {
  const order = await db.database.db
    .collection<{ ulid: string; customer_id: string }>('orders')
    .findOne({}, { projection: { ulid: 1, customer_id: 1 } });
  if (!order) throw new Error('no order in the bench database');
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(order.customer_id)
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
  const env: SharedServerEnv = {
    MONGODB_URI: db.uri,
    MONGODB_DB: db.dbName,
    JWT_SECRET: BENCH_JWT_SECRET,
    PUBLIC_BASE_URL: 'http://127.0.0.1:4000',
  };
  const target = { orderPath: `/api/v1/orders/${order.ulid}`, token };
  log(
    `database: ${db.kind}, ${SPEC.products} products, ${SPEC.orders} orders; settings ${JSON.stringify(settings)}`,
  );

  if (!args.only || args.only === 'attacks') {
    await withServer(env, {}, target, async (t) => {
      const attacks = {
        'alias (40 × 20 searches)': aliasAttack,
        'pipelined (200, closed at 0.5 s)': pipelineAttack,
        'resets (400 mid-request)': resetAttack,
      };
      for (const [name, attack] of Object.entries(attacks)) {
        await timeToRecover(t);
        const started = performance.now();
        await attack(t);
        const left = (performance.now() - started) / 1000;
        log(
          `row 5 ${name}: client gone after ${left.toFixed(1)} s; recovered ${(await timeToRecover(t)).toFixed(1)} s later`,
        );
      }
    });
  }

  if (!args.only || args.only === 'goodput') {
    await withServer(env, {}, target, async (t) => {
      for (const clients of [1, 8, 16, 50]) {
        await timeToRecover(t);
        const result = await goodput(t, clients, phaseSeconds);
        log(
          `row 5 goodput, ${clients} clients: ${result.perSecond.toFixed(1)} searches/s (p50 ${result.p50Ms} ms; statuses ${JSON.stringify(result.statuses)})`,
        );
      }
    });
  }

  if (!args.only || args.only === 'stampede') {
    await withServer(env, { RESPONSE_CACHE_TTL_MS: '2000' }, target, async (t) => {
      const result = await stampede(t, Math.max(phaseSeconds, 15));
      log(
        `row 6 stampede, 20 clients, TTL 2 s: ${result.unavailablePercent} % 503 (${result.unavailable}/${result.total}), ${result.ok} × 200 of which ${result.hit} hits, longest stretch without a 200: ${result.longestGap} s`,
      );
    });
  }
} finally {
  await db.stop();
}
