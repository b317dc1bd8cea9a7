import type { Server } from 'node:http';
import { createApp, type App } from './app';
import { resolveJwtSecret } from './auth/dev-secret';
import { createViewerResolver } from './auth/tokens';
import type { Config } from './config';
import type { Db } from 'mongodb';
import { createLiveOrders, type LiveOrders } from './db/orders/live-orders';
import type { EmbeddedDatabase } from './engine';
import { connectDatabase, ensureIndexes, type Database } from './db/mongo';
import { countUnindexed, SEARCH_INDEX_COMMAND } from './db/catalog/product-search';
import { apiDocsEdge } from './docs/use-api-docs';
import { createDrain } from './http/drain';
import { createNodeServer, listen } from './http/node-server';
import { shutdownInOrder } from './http/shutdown';
import type { Logger } from './logger';
import { openFeeds, type Feeds } from './db/feed/open-feeds';
import { startDevelopmentDatabase } from './server-embedded';
import { connectRedis, type SharedRedis } from './store/redis';

export interface RunningServer {
  url: string;
  port: number;
  app: App;
  http: Server;
  database: Database;
  embedded?: EmbeddedDatabase;
  /** The shared store, when REDIS_URL is set. */
  redis?: SharedRedis;
  /** The live order subscriptions of this instance. */
  liveOrders: LiveOrders;
  /** Stops accepting, lets in-flight requests finish (up to the deadline), then closes the database. */
  close(deadlineMs?: number): Promise<void>;
}

export interface StartOptions {
  config: Config;
  logger: Logger;
  /**
   * Loads sample data into an empty database and says whether it did; called only when
   * SEED_FIXTURES allows it. Injected by the entry point: src/ never imports seed/.
   */
  seedIfEmpty?: (db: Db) => Promise<boolean>;
}

/** Products written without current grams are still found, by a scan: say so, and how to fix it. */
async function warnOfUnindexedProducts(database: Database, logger: Logger): Promise<void> {
  const products = await countUnindexed(database.db);
  if (products > 0) {
    logger.warn(
      { products },
      `products without current search grams: searches scan every product until \`${SEARCH_INDEX_COMMAND}\` writes them`,
    );
  }
}

/** Database (real or embedded), indexes, optional fixtures, the app and its HTTP server. */
export async function startServer({ config, logger, seedIfEmpty }: StartOptions): Promise<RunningServer> {
  const started = config.mongo.uri ? undefined : await startDevelopmentDatabase(config, logger);
  const embedded = started?.embedded;
  let database: Database | undefined;
  let feeds: Feeds | undefined;
  // Connects in the background: a Redis that is down at start only means going without it.
  const redis = config.redisUrl ? connectRedis({ url: config.redisUrl, logger }) : undefined;
  const release = async () => {
    await feeds?.close();
    await database
      ?.close()
      .catch((error: unknown) => logger.warn({ err: error }, 'closing the database client failed'));
    await redis?.close();
    await started?.unpublish?.();
    await embedded?.stop();
  };
  try {
    database = await connectDatabase({
      uri: config.mongo.uri ?? embedded!.uri,
      dbName: config.mongo.dbName,
      maxPoolSize: config.mongo.maxPoolSize,
      serverSelectionTimeoutMS: config.mongo.timeoutMs,
      socketTimeoutMS: config.mongo.timeoutMs + 1_000,
      monitorCommands: config.mongo.monitorCommands,
      readPreference: config.mongo.readPreference,
      log: (message, details) => logger.warn(details, message),
    });
    const created = await ensureIndexes(database.db);
    if (created.length > 0) logger.info({ indexes: created }, 'created indexes');
    await warnOfUnindexedProducts(database, logger);
    if (config.seedFixturesWhenEmpty && seedIfEmpty && (await seedIfEmpty(database.db))) {
      logger.info('loaded the sample fixtures into the empty database');
    }

    // Every instance follows the catalogue (its grams, its caches) and the orders (live subscriptions).
    feeds = await openFeeds(
      database.db,
      config,
      logger,
      config.changeFeed.postgresUrl ?? embedded?.postgresUrl,
    );
    const { products: productFeed, orders: orderFeed, totals, beforeImages, logEvents } = feeds;
    const liveOrders = createLiveOrders(orderFeed, config.liveOrders, (error) =>
      logger.warn({ err: error }, 'a changed order could not be offered to its live subscribers; skipped'),
    );
    const drain = createDrain();
    const app = createApp({
      tracing: await loadTracing(config),
      config,
      database,
      resolveViewer: await viewerResolver(config, logger),
      logger,
      isDraining: () => drain.draining,
      redis,
      databaseDescription: started?.description,
      productFeed,
      keptTotals: { totals, beforeImages },
      logEvents,
      liveOrders,
      edges: [
        apiDocsEdge({ serverUrl: config.publicBaseUrl, compressionMinBytes: config.compressionMinBytes }),
      ],
      bodiesLimitedUpstream: true,
      connectionRefusals: () => node.refused(),
    });
    const node = createNodeServer(app, { config, logger, drain });
    const { url, port } = await listen(node.server, config.host, config.port);
    const close = shutdownInOrder({
      server: node.server,
      drain,
      liveOrders,
      logger,
      defaultDeadlineMs: config.shutdownDeadlineMs,
      release,
    });
    return { url, port, app, http: node.server, database, embedded, redis, liveOrders, close };
  } catch (error) {
    await release();
    throw error;
  }
}

function viewerResolver(config: Config, logger: Logger) {
  return resolveJwtSecret(config).then((secret) =>
    createViewerResolver(
      { ...config.jwt, secret },
      {
        // At most one line per cool-down (30 s): fetches are never more frequent.
        onKeySetFailure: (error) =>
          logger.warn(
            { err: { message: error.message } },
            'fetching the JWKS failed; tokens it signs are refused',
          ),
      },
    ),
  );
}

/** Loaded only when tracing is on: off, no OpenTelemetry module is imported at all. */
async function loadTracing(config: Config) {
  if (!config.tracing) return undefined;
  const { graphqlTracingPlugins, activeTraceId } = await import('./observability/use-graphql-tracing');
  return { plugins: graphqlTracingPlugins, traceId: activeTraceId };
}
