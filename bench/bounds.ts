/**
 * Issue 28 rows 5, 6, 10 and 11 as figures, on a production-mode server (bench database, 2,020
 * products): peak RSS while 300 connections ask for the docs bundle in br (row 5) and for a cached
 * 1 MB GraphQL batch in br (row 6), and p50 and throughput of cached REST reads while the shared
 * Redis is SIGSTOPped (row 10), and the worst answer while every PostgreSQL process is (row 11);
 * with `--only 8`, the database CPU one client of 30-word searches drives at the production limits.
 * Loopback only; each phase a few seconds.
 *
 *   node --import tsx bench/bounds.ts [--only 5|6|8|10|11] [--seconds 8]
 *
 * The caps that would refuse the load generator itself (one address, one client) are lifted by
 * bench/servers.ts: MAX_CONNECTIONS_PER_ADDRESS and the rate limits.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { openBenchDatabase } from './database';
import { peakRssMb, resetPeakRss, rssMb, totalCpuMs } from './proc';
import { startServerProcess, type SharedServerEnv } from './servers';
import { uniqueTerm } from '../test/support/attacks';
import { startRedis } from '../test/support/redis';
import { execFileSync } from 'node:child_process';

const JWT_SECRET = 'bench-secret-of-at-least-32-characters-000';
const DATA_DIR = path.join(import.meta.dirname, '.data');
const SPEC = { seed: 21, products: 2_020, orders: 2_000 };
const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '8' }, only: { type: 'string' } },
});
const runs = (row: string) => !args.only || args.only === row;
const seconds = Number(args.seconds);
const log = (line: string) => console.log(line);

const FIELDS =
  'id databaseId name brandId brandName categoryName channel createdAt updatedAt url region ' +
  'discountPercentage isPermanentOutOfStock description shortDescription notes images tags variant { ' +
  'id databaseId name price { amount currency formatted decimal localizedDecimal } ' +
  'faceValue { amount currency formatted decimal localizedDecimal } }';
const BATCH = JSON.stringify(
  Array.from({ length: 10 }, () => ({
    query: `{ products(first: 90) { edges { cursor node { ${FIELDS} } } } }`,
  })),
);

function load(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

const statusesOf = (result: autocannon.Result) =>
  `2xx ${result['2xx']}, non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`;

const db = await openBenchDatabase({
  spec: SPEC,
  dbName: 'storefront_attacks',
  dataDir: path.join(DATA_DIR, 'db'),
  log,
});
const redis = await startRedis();
try {
  const env: SharedServerEnv = {
    MONGODB_URI: db.uri,
    MONGODB_DB: db.dbName,
    JWT_SECRET,
    PUBLIC_BASE_URL: 'http://127.0.0.1:4000',
  };
  const server = await startServerProcess('ours', {
    env,
    logDir: path.join(DATA_DIR, 'bounds-logs'),
    extraEnv: {
      REDIS_URL: redis.url,
      RESPONSE_CACHE_TTL_MS: '600000',
      // Row 8 is one client against the production limits.
      ...(args.only === '8'
        ? { RATE_LIMIT_REQUESTS_PER_MINUTE: '600', RATE_LIMIT_COST_PER_MINUTE: '1000000' }
        : {}),
    },
  });
  try {
    const rssPhase = async (name: string, options: autocannon.Options) => {
      await sleep(1_000);
      const before = rssMb(server.pid)!;
      resetPeakRss(server.pid);
      const result = await load({ connections: 300, duration: seconds, ...options });
      await sleep(500);
      log(
        `${name}: RSS ${before.toFixed(0)} MB → peak ${peakRssMb(server.pid)!.toFixed(0)} MB, after ${rssMb(server.pid)!.toFixed(0)} MB; ` +
          `${statusesOf(result)}; ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms`,
      );
    };

    // Row 5.
    if (runs('5'))
      await rssPhase('row 5, docs bundle br, 300 connections', {
        url: `${server.origin}/docs/assets/swagger-ui-bundle.js`,
        headers: { 'accept-encoding': 'br' },
      });

    // Row 6: stored first, then asked in br by 300 connections at once.
    for (let attempt = 0; attempt < (runs('6') ? 3 : 0); attempt++) {
      const response = await fetch(`${server.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: BATCH,
      });
      const bytes = (await response.arrayBuffer()).byteLength;
      if (attempt === 0) log(`row 6 batch answer: ${response.status}, ${bytes} bytes`);
    }
    if (runs('6'))
      await rssPhase('row 6, cached 1 MB batch br, 300 connections', {
        url: `${server.origin}/graphql`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept-encoding': 'br' },
        body: BATCH,
      });

    // Row 10: cached REST reads, 20 connections; Redis SIGSTOPped for the second run.
    if (runs('10')) {
      const rest = { url: `${server.origin}/api/v1/products?per_page=15`, connections: 20 };
      await sleep(3_000);
      await load({ ...rest, duration: 1 });
      const normal = await load({ ...rest, duration: 4 });
      log(
        `row 10, Redis answering: p50 ${normal.latency.p50} ms, ${normal.requests.average.toFixed(0)} req/s; ${statusesOf(normal)}`,
      );
      redis.pause();
      try {
        await load({ ...rest, duration: 1 });
        const stalled = await load({ ...rest, duration: Math.max(4, seconds - 1) });
        log(
          `row 10, Redis SIGSTOPped (after its first second): p50 ${stalled.latency.p50} ms, ` +
            `${stalled.requests.average.toFixed(0)} req/s; ${statusesOf(stalled)}`,
        );
      } finally {
        redis.resume();
      }
    }
    // Row 8: one client (4 loops) of uncached 30-word searches for 15 s at the production limits;
    // the database's CPU (PostgreSQL and FerretDB) over that time.
    if (args.only === '8') {
      // 30 words of 5 letters that occur nowhere (149 characters, under the 200 allowed).
      const words = () =>
        Array.from({ length: 30 }, () => `q${Math.random().toString(36).slice(2, 6).padEnd(4, 'x')}`).join(
          ' ',
        );
      const pids = await db.serverPids();
      const cpuBefore = totalCpuMs(pids, true);
      const counts = new Map<number, number>();
      const until = performance.now() + 15_000;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (performance.now() < until) {
            const response = await fetch(
              `${server.origin}/api/v1/products/search?term=${encodeURIComponent(words())}&per_page=15`,
            );
            await response.arrayBuffer();
            counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
            if (response.status === 429) await sleep(Number(response.headers.get('retry-after') ?? 1) * 10);
          }
        }),
      );
      const cpu = totalCpuMs(await db.serverPids(), true) - cpuBefore;
      log(
        `row 8, one client of 30-word searches for 15 s: database CPU ${(cpu / 15_000).toFixed(2)} cores; ` +
          `statuses ${JSON.stringify(Object.fromEntries(counts))}`,
      );
    }

    // Row 11: 20 clients of uncached searches; every PostgreSQL process SIGSTOPped for 8 s.
    if (runs('11')) {
      const postgres = (await db.serverPids()).filter((pid) => {
        try {
          return /postgres/.test(
            execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }),
          );
        } catch {
          return false;
        }
      });
      const answers: { status: number; ms: number }[] = [];
      let running = true;
      const clients = Array.from({ length: 20 }, async () => {
        while (running) {
          const started = performance.now();
          let status = 0;
          try {
            const response = await fetch(
              `${server.origin}/api/v1/products/search?term=${uniqueTerm()}&per_page=15`,
              {
                signal: AbortSignal.timeout(30_000),
              },
            );
            await response.arrayBuffer();
            status = response.status;
          } catch {
            status = 0;
          }
          answers.push({ status, ms: performance.now() - started });
          if (status !== 200) await sleep(50);
        }
      });
      await sleep(1_000);
      const stoppedAt = answers.length;
      for (const pid of postgres) process.kill(pid, 'SIGSTOP');
      await sleep(8_000);
      for (const pid of postgres) process.kill(pid, 'SIGCONT');
      await sleep(3_000);
      running = false;
      await Promise.all(clients);
      const during = answers.slice(stoppedAt);
      const worst = Math.max(...during.map((answer) => answer.ms));
      const counts = new Map<number, number>();
      for (const { status } of during) counts.set(status, (counts.get(status) ?? 0) + 1);
      log(
        `row 11, ${postgres.length} PostgreSQL processes SIGSTOPped 8 s under 20 clients: worst answer ${Math.round(worst)} ms; ` +
          `statuses ${JSON.stringify(Object.fromEntries(counts))}`,
      );
    }
  } finally {
    await server.stop();
  }
} finally {
  await redis.stop();
  await db.stop();
}
