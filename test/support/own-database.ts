import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { connectDatabase, ensureIndexes } from '../../src/db/mongo';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/engine';
import { createLogger } from '../../src/logger';
import { startServer, type RunningServer } from '../../src/server';
import { loadFixtures } from '../../seed/load';
import { TEST_JWT_SECRET } from './server';

/**
 * A server on an embedded database of its own, with the fixtures, for tests that take the
 * database away (the run's shared one serves every other file): `restart()` brings it back on the
 * same address, `stop()` ends both.
 */
export interface OwnDatabaseServer {
  server: RunningServer;
  database: EmbeddedDatabase;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startServerOnOwnDatabase(
  dbName: string,
  env: Record<string, string> = {},
): Promise<OwnDatabaseServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `storefront-${dbName}-`));
  let database = await startEmbeddedDatabase({ dataDir, log: () => undefined });
  const port = database.port;
  const seeding = await connectDatabase({ uri: database.uri, dbName });
  await ensureIndexes(seeding.db);
  await loadFixtures(seeding.db);
  await seeding.close();
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    MONGODB_URI: database.uri,
    MONGODB_DB: dbName,
    JWT_SECRET: TEST_JWT_SECRET,
    SEED_FIXTURES: 'false',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const server = await startServer({ config, logger: createLogger('silent') });
  const own: OwnDatabaseServer = {
    server,
    database,
    async restart() {
      database = await startEmbeddedDatabase({ dataDir, port, log: () => undefined });
      own.database = database;
    },
    async stop() {
      await server.close(1_000);
      await database.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return own;
}
