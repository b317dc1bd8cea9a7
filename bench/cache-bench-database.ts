import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../src/config';
import { connectDatabase, ensureIndexes } from '../src/db/mongo';
import { startEmbeddedDatabase } from '../src/engine';
import { loadFixtures, loadGenerated } from '../seed/load';

export interface CacheBenchDatabase {
  uri: string;
  dbName: string;
  /** A server's settings on it: the engine's log followed, the response cache's lifetime as given. */
  config: Config;
}

/**
 * The cache benches' database: a throwaway embedded one with the fixtures and `generated` more
 * products (seed 1), removed after `run`.
 */
export async function withCacheBenchDatabase<T>(
  dbName: string,
  options: { generated: number; responseCacheTtlMs: number },
  run: (database: CacheBenchDatabase) => Promise<T>,
): Promise<T> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `bench-${dbName}-`));
  const database = await startEmbeddedDatabase({ dataDir, log: () => undefined });
  try {
    const seeding = await connectDatabase({ uri: database.uri, dbName });
    await ensureIndexes(seeding.db);
    if (options.generated > 0)
      await loadGenerated(seeding.db, {
        seed: 1,
        products: options.generated,
        orders: 0,
        withFixtures: true,
      });
    else await loadFixtures(seeding.db);
    await seeding.close();
    const config = loadConfig({
      NODE_ENV: 'test',
      PORT: '0',
      MONGODB_URI: database.uri,
      MONGODB_DB: dbName,
      CHANGE_FEED_POSTGRES_URL: database.postgresUrl,
      JWT_SECRET: 'bench-secret-that-is-at-least-32-characters',
      PUBLIC_BASE_URL: 'https://shop.example',
      LOG_LEVEL: 'silent',
      RESPONSE_CACHE_TTL_MS: String(options.responseCacheTtlMs),
    });
    return await run({ uri: database.uri, dbName, config });
  } finally {
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
