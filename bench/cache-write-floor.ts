import { parseArgs } from 'node:util';
import { MongoClient, type Document } from 'mongodb';
import { createLogger } from '../src/logger';
import { startServer } from '../src/server';
import { withCacheBenchDatabase } from './cache-bench-database';
import { median } from './median';
import { DISTINCT_PATHS, REQUESTS, requestMix } from './cache-mix';
import { outsideWrites } from './outside-writes';

/**
 * Issue 35: the best hit ratio any cache can reach on bench/cache-under-writes.ts's mix, one that
 * drops exactly the answers a write changed, `npm run bench:cache-floor [-- --products N]`. The
 * bench's writes (bench/outside-writes.ts, same seed) are made one at a time on an uncached server;
 * after each, every one of the mix's distinct reads is asked again and compared with its answer
 * before the write. Then the bench's schedule is replayed against that record: reads REQUESTS_PER_S
 * a second, ROUNDS rounds, writes WRITES_PER_S a second from the start, an answer cached from its
 * first miss until a write changes it.
 */

const { values: args } = parseArgs({
  options: {
    products: { type: 'string', default: '0' },
    writes: { type: 'string', default: '400' },
    rate: { type: 'string', multiple: true, default: ['10', '9.5'] },
  },
});
const GENERATED = Number(args.products);
const WRITES = Number(args.writes);

const ROUNDS = 3;
const REQUESTS_PER_S = 50;

await withCacheBenchDatabase(
  'cachefloor',
  { generated: GENERATED, responseCacheTtlMs: 0 },
  async ({ uri, config }) => {
    const server = await startServer({ config, logger: createLogger('silent') });
    // The lasting slot's first resync (every product's search row) done: searches no longer scan.
    for (
      let waited = 0;
      !/^change_feed_log_leading 1$/m.test(await (await fetch(`${server.url}/metrics`)).text());
      waited++
    ) {
      if (waited > 600) throw new Error('the log feed did not lead within 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    /** An answer as a client sees it (a busy 503 asked again); a request after a write answers it. */
    const answer = async (requestPath: string, tries = 10): Promise<string> => {
      const response = await fetch(`${server.url}${requestPath}`, {
        headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
      });
      const body = await response.text();
      if (response.ok && !body.includes('"errors"')) return body;
      if (tries === 0) throw new Error(`${requestPath}: ${response.status} ${body.slice(0, 200)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      return answer(requestPath, tries - 1);
    };
    const answers = () => Promise.all(DISTINCT_PATHS.map((requestPath) => answer(requestPath)));
    const client = new MongoClient(uri);
    const writeNext = await outsideWrites(client.db('cachefloor').collection<Document>('products'));
    let before = await answers();
    const again = await answers();
    const unstable = DISTINCT_PATHS.filter((_, index) => again[index] !== before[index]);
    if (unstable.length > 0) throw new Error(`answers differ with no write between: ${unstable.join(' ')}`);
    /** For each write, the indices in DISTINCT_PATHS of the answers it changed. */
    const changed: number[][] = [];
    for (let write = 0; write < WRITES; write++) {
      await writeNext();
      const after = await answers();
      changed.push(after.flatMap((text, index) => (text === before[index] ? [] : [index])));
      before = after;
    }
    await client.close();
    await server.close(1_000);

    const perWrite = changed.map((indices) => indices.length);
    const byPath = DISTINCT_PATHS.map(
      (_, index) => changed.filter((indices) => indices.includes(index)).length,
    );
    console.log(
      `${20 + GENERATED} products, ${WRITES} writes: answers of the ${DISTINCT_PATHS.length} a write changes, mean ${(perWrite.reduce((a, b) => a + b, 0) / WRITES).toFixed(2)}, median ${median(perWrite)}, none ${perWrite.filter((n) => n === 0).length} times`,
    );
    console.log('writes changing each read (of the mix, in order):', byPath.join(' '));

    const mix = requestMix();
    const mixCounts = DISTINCT_PATHS.map((p) => mix.filter((m) => m === p).length);
    console.log('asks of each read per round:', mixCounts.join(' '));
    for (const rate of args.rate.map(Number)) {
      const cached = new Set<number>();
      let applied = 0;
      const rounds: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        let hits = 0;
        for (const [index, requestPath] of mix.entries()) {
          const at = round * (REQUESTS / REQUESTS_PER_S) + index / REQUESTS_PER_S;
          for (; applied < changed.length && applied / rate <= at; applied++)
            for (const dropped of changed[applied]!) cached.delete(dropped);
          if (applied >= changed.length && round * REQUESTS + index > 0 && applied / rate <= at)
            throw new Error(`more than ${WRITES} writes in ${ROUNDS} rounds at ${rate}/s: give --writes`);
          const key = DISTINCT_PATHS.indexOf(requestPath);
          if (cached.has(key)) hits++;
          else cached.add(key);
        }
        rounds.push(hits / REQUESTS);
      }
      console.log(
        `ideal cache at ${rate} writes/s: ${rounds.map((r) => (r * 100).toFixed(1)).join(' / ')} %, median ${(median(rounds) * 100).toFixed(1)} %`,
      );
    }
  },
);
