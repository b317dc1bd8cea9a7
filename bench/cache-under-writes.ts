import { parseArgs } from 'node:util';
import { MongoClient, type Document } from 'mongodb';
import { createLogger } from '../src/logger';
import { startServer, type RunningServer } from '../src/server';
import { withCacheBenchDatabase } from './cache-bench-database';
import { median } from './median';
import { DISTINCT_PATHS, REQUESTS, requestMix } from './cache-mix';
import { outsideWrites } from './outside-writes';

/**
 * Issue 35: the response cache's hit ratio under outside writes, `npm run bench:cache-writes`.
 * One instance reading the embedded engine's log (a fresh one, empty cache, per phase), the request
 * mix of bench/cache-hit-ratio.ts sent ROUNDS times, REQUESTS_PER_S a second (a client's pace, not
 * as fast as it can: then every key is asked again between two writes), with no writes, then while
 * a plain-driver writer (no `updated_at`) renames products, changes prices and moves products
 * between categories, WRITES_PER_S a second, each to a product drawn at random. Each round is the
 * mix once (the first fills the cache). `--products N` adds N generated products to the fixtures'
 * 20 (default 0): with 20, every product is on one of the mix's pages, so every write purges some.
 */

const { values: args } = parseArgs({ options: { products: { type: 'string', default: '0' } } });
const GENERATED = Number(args.products);

const ROUNDS = 3;
const WRITES_PER_S = 10;
const REQUESTS_PER_S = 50;

async function hitRatio(server: RunningServer): Promise<{ ratio: number; msPerRequest: number }> {
  let hits = 0;
  const mix = requestMix();
  const started = performance.now();
  let busyMs = 0;
  for (const [index, requestPath] of mix.entries()) {
    const wait = started + (index * 1000) / REQUESTS_PER_S - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    const response = await fetch(`${server.url}${requestPath}`, {
      headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
    });
    await response.arrayBuffer();
    if (response.headers.get('x-cache') === 'HIT') hits++;
    busyMs += performance.now() - sent;
  }
  return { ratio: hits / mix.length, msPerRequest: busyMs / mix.length };
}

/** Another application's writes (bench/outside-writes.ts), WRITES_PER_S a second. */
function startWriter(uri: string, dbName: string) {
  const client = new MongoClient(uri);
  const products = client.db(dbName).collection<Document>('products');
  let stopped = false;
  let written = 0;
  const run = async () => {
    const writeNext = await outsideWrites(products);
    while (!stopped) {
      await writeNext();
      written++;
      await new Promise((resolve) => setTimeout(resolve, 1000 / WRITES_PER_S));
    }
  };
  const running = run();
  return {
    written: () => written,
    async stop() {
      stopped = true;
      await running;
      await client.close();
    },
  };
}

await withCacheBenchDatabase(
  'cachewrites',
  { generated: GENERATED, responseCacheTtlMs: 600000 },
  async ({ uri, config }) => {
    const rows: string[] = [];
    const measure = async (label: string, writes: () => number) => {
      const server = await startServer({ config, logger: createLogger('silent') });
      const rounds = [];
      const from = writes();
      const started = performance.now();
      for (let round = 0; round < ROUNDS; round++) rounds.push(await hitRatio(server));
      const rate = ((writes() - from) * 1000) / (performance.now() - started);
      const ratio = median(rounds.map((r) => r.ratio));
      const ms = median(rounds.map((r) => r.msPerRequest));
      const each = rounds.map((r) => `${(r.ratio * 100).toFixed(1)}`).join(' / ');
      rows.push(
        `| ${label} | ${rate.toFixed(1)} | ${each} % | ${(ratio * 100).toFixed(1)} % | ${ms.toFixed(2)} ms |`,
      );
      // Totals counted again because a write dropped them (absent on code without the counter).
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const counted = (reason: string) =>
        new RegExp(`^kept_totals_counted_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ??
        '—';
      rows[rows.length - 1] += ` ${counted('write')} | ${counted('counting')} |`;
      await server.close(1_000);
      return ratio;
    };
    const quiet = await measure('none', () => 0);
    const writer = startWriter(uri, 'cachewrites');
    const busy = await measure(`${WRITES_PER_S}/s`, writer.written);
    await writer.stop();
    console.log(
      `Hit ratio of ${REQUESTS} requests over ${DISTINCT_PATHS.length} distinct reads, ${20 + GENERATED} products, one instance (log), ${REQUESTS_PER_S} requests/s, ${ROUNDS} rounds:\n`,
    );
    console.log(
      '| outside writes | writes/s reached | hit ratio per round | median | median ms per request | recounted: write unsure | recounted: came while counting |\n|---|--:|--:|--:|--:|--:|--:|',
    );
    console.log(rows.join('\n'));
    console.log(`\nUnder writes: ${((busy / quiet) * 100).toFixed(0)} % of the quiet ratio.`);
  },
);
