import type { Db } from 'mongodb';
import { ConfigError, loadConfig, type Config } from './config';
import { createLogger, prettyLines } from './logger';
import type { Tracing } from './observability/tracing';

export interface MainOptions {
  /** Loads the sample fixtures into an empty database (see scripts/start.ts, which supplies it). */
  seedIfEmpty?: (db: Db) => Promise<boolean>;
}

/** Process entry: validated config, the server, the URLs a person needs, and clean shutdown. */
export async function main({ seedIfEmpty }: MainOptions = {}): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }

  const logger = createLogger(
    config.logLevel,
    config.logFormat === 'pretty' ? await prettyLines() : undefined,
  );
  // The SDK must patch the MongoDB driver before anything imports it: tracing first, then the
  // server (imported here, not at the top, for that order). Off, the SDK is never loaded.
  let tracing: Tracing | undefined;
  if (config.tracing) tracing = (await import('./observability/tracing')).startTracing();
  const { startServer } = await import('./server');
  const server = await startServer({ config, logger, seedIfEmpty }).catch(async (error: unknown) => {
    const { startFailureHint } = await import('./start-failure');
    const hint = startFailureHint(error, config);
    if (hint) console.error(hint);
    else logger.fatal({ err: error }, 'the server could not start');
    process.exit(1);
  });

  const base = config.publicBaseUrl ?? server.url;
  logger.info({ url: server.url }, 'storefront gateway listening');
  console.log(
    [
      '',
      `Storefront Gateway is running${server.embedded ? ' on the embedded database (FerretDB + PostgreSQL)' : ''}.`,
      `  Start page          ${base}/`,
      `  GraphQL + GraphiQL  ${base}/graphql`,
      `  REST                ${base}/api/v1/products`,
      `  REST search         ${base}/api/v1/products/search?term=card`,
      `  REST order          ${base}/api/v1/orders/{ulid}   (token: npm run token -- --sub <customer>)`,
      `  API docs            ${base}/docs`,
      ...(config.env === 'production' || config.persistedOperations.mode === 'trusted-only'
        ? []
        : [`  Live orders         ${base}/ shows the demo: a subscription, then npm run simulate`]),
      '',
    ].join('\n'),
  );

  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      server
        .close()
        .then(() => tracing?.shutdown())
        .then(() => process.exit(0))
        .catch((error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        });
    });
  }
}
