import path from 'node:path';
import type { Config } from './config';
import type { EmbeddedDatabase } from './engine';
import type { Logger } from './logger';

export interface StartedEmbedded {
  embedded: EmbeddedDatabase;
  /** Withdraws the database's address from the data folder (tools then start their own). */
  unpublish?: () => Promise<void>;
  description: string;
}

/** The embedded database of development (never production), supervised and published to the tools. */
export async function startDevelopmentDatabase(config: Config, logger: Logger): Promise<StartedEmbedded> {
  // loadConfig refuses production without MONGODB_URI; this guards callers that build a Config by hand.
  if (config.env === 'production') throw new Error('MONGODB_URI is required when NODE_ENV=production');
  // Loaded only here, so a server on MONGODB_URI never loads the embedded database's launcher or build.
  const {
    FERRETDB_VERSION,
    POSTGRES_MAJOR,
    publishRunningDatabase,
    startEmbeddedDatabase,
    superviseEmbeddedDatabase,
  } = await import('./engine');
  const embedded = superviseEmbeddedDatabase(
    await startEmbeddedDatabase({
      dataDir: path.join(config.dataDir, 'db'),
      log: (line) => logger.info(line),
    }),
    { log: (message, details) => logger.warn(details ?? {}, message) },
  );
  logger.info({ port: embedded.port }, 'embedded database started');
  // The tools on this data folder (npm run simulate, seed, search:index) use it from here on.
  const unpublish = await publishRunningDatabase(embedded.dataDir, {
    uri: embedded.uri,
    owner: 'npm start',
  }).catch((error: unknown) => {
    logger.warn({ err: error }, "could not publish the database's address; tools start their own");
    return undefined;
  });
  return {
    embedded,
    unpublish,
    description: `the embedded database (FerretDB ${FERRETDB_VERSION} with DocumentDB on PostgreSQL ${POSTGRES_MAJOR}), started and stopped with this server`,
  };
}
