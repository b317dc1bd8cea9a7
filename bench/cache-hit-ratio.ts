import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { startEmbeddedDatabase } from '../src/engine';
import { connectDatabase, ensureIndexes } from '../src/db/mongo';
import { createLogger } from '../src/logger';
import { startServer, type RunningServer } from '../src/server';
import { loadFixtures } from '../seed/load';
import { startRedis } from '../test/support/redis';
import { DISTINCT_PATHS, REQUESTS, requestMix } from './cache-mix';

/**
 * Response-cache hit ratio of one fixed request mix sent round-robin to 1 and to 3 instances, with
 * per-process caches and with the Redis-shared cache: `npm run bench:cache`. Counts X-Cache headers.
 */

async function measure(instances: RunningServer[]): Promise<number> {
  let hits = 0;
  const mix = requestMix();
  for (const [index, requestPath] of mix.entries()) {
    const response = await fetch(`${instances[index % instances.length]!.url}${requestPath}`, {
      headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
    });
    await response.arrayBuffer();
    if (response.headers.get('x-cache') === 'HIT') hits++;
    // Let a background write land, as it would between two users' requests.
    if (index % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return hits / mix.length;
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-cache-'));
const database = await startEmbeddedDatabase({ dataDir, log: () => undefined });
// The tests' private Redis (loopback, no persistence, stopped with this process).
const redis = await startRedis();
try {
  const seeding = await connectDatabase({ uri: database.uri, dbName: 'cachebench' });
  await ensureIndexes(seeding.db);
  await loadFixtures(seeding.db);
  await seeding.close();
  await new Promise((resolve) => setTimeout(resolve, 300));

  const rows: string[] = [];
  for (const shared of [false, true]) {
    for (const count of [1, 3]) {
      if (shared) await redis.restart(); // empty
      const config = loadConfig({
        NODE_ENV: 'test',
        PORT: '0',
        MONGODB_URI: database.uri,
        MONGODB_DB: 'cachebench',
        JWT_SECRET: 'bench-secret-that-is-at-least-32-characters',
        PUBLIC_BASE_URL: 'https://shop.example',
        LOG_LEVEL: 'silent',
        RESPONSE_CACHE_TTL_MS: '600000',
        ...(shared ? { REDIS_URL: redis.url } : {}),
      });
      const instances = await Promise.all(
        Array.from({ length: count }, () => startServer({ config, logger: createLogger('silent') })),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const ratio = await measure(instances);
      rows.push(
        `| ${count} | ${shared ? 'shared (Redis)' : 'per process'} | ${REQUESTS} | ${(ratio * 100).toFixed(1)} % |`,
      );
      await Promise.all(instances.map((instance) => instance.close(1_000)));
    }
  }
  console.log(
    `Hit ratio of ${REQUESTS} requests over ${DISTINCT_PATHS.length} distinct reads, round-robin:\n`,
  );
  console.log('| instances | cache | requests | hit ratio |\n|--:|---|--:|--:|');
  console.log(rows.join('\n'));
} finally {
  await redis.stop();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
