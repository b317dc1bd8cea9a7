import { createServer, type RequestListener, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp, type App } from './app';
import { resolveJwtSecret } from './auth/dev-secret';
import { createViewerResolver } from './auth/tokens';
import type { Config } from './config';
import type { Db } from 'mongodb';
import { createLiveOrders, type LiveOrders } from './db/orders/live-orders';
import { shuttingDown } from './errors';
import type { EmbeddedDatabase } from './engine';
import { connectDatabase, ensureIndexes, type Database } from './db/mongo';
import { countUnindexed, SEARCH_INDEX_COMMAND } from './db/catalog/product-search';
import { apiDocsEdge } from './docs/use-api-docs';
import { createDrain } from './http/drain';
import { answerClientErrors, guardRequests, NODE_SERVER_OPTIONS } from './http/node-guards';
import { oneRequestPerConnection } from './http/one-request-per-connection';
import { capConnections } from './limits/connection-caps';
import type { Logger } from './logger';
import { openFeeds, type Feeds } from './db/feed/open-feeds';
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

/** The least time a socket may be idle (no byte read or written) before it is closed. */
const SOCKET_IDLE_TIMEOUT_MS = 15_000;
/**
 * An event stream (a live subscription) is silent between Yoga's pings, every 12 s: its socket
 * may be idle for two of them. One whose reader stops reading still goes at this timeout.
 */
const EVENT_STREAM_IDLE_TIMEOUT_MS = 30_000;
/** What a live subscription ended by shutdown is told: subscribe again after this many seconds. */
const RESUBSCRIBE_AFTER_S = 5;
/** Requests a connection may pipeline behind the one being answered (src/http/one-request-per-connection.ts). */
const PIPELINED_WAITING = 16;

/** The idle timeout of a request that asks for an event stream, not the server's. */
function eventStreamsIdleLonger(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.accept?.includes('text/event-stream'))
      req.socket.setTimeout(EVENT_STREAM_IDLE_TIMEOUT_MS);
    listener(req, res);
  };
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
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
  let embedded: EmbeddedDatabase | undefined;
  let unpublish: (() => Promise<void>) | undefined;
  let uri = config.mongo.uri;
  let databaseDescription: string | undefined;
  if (!uri) {
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
    embedded = superviseEmbeddedDatabase(
      await startEmbeddedDatabase({
        dataDir: path.join(config.dataDir, 'db'),
        log: (line) => logger.info(line),
      }),
      { log: (message, details) => logger.warn(details ?? {}, message) },
    );
    uri = embedded.uri;
    logger.info({ port: embedded.port }, 'embedded database started');
    // The tools on this data folder (npm run simulate, seed, search:index) use it from here on.
    unpublish = await publishRunningDatabase(embedded.dataDir, { uri, owner: 'npm start' }).catch(
      (error: unknown) => {
        logger.warn({ err: error }, "could not publish the database's address; tools start their own");
        return undefined;
      },
    );
    databaseDescription = `the embedded database (FerretDB ${FERRETDB_VERSION} with DocumentDB on PostgreSQL ${POSTGRES_MAJOR}), started and stopped with this server`;
  }

  let database: Database | undefined;
  let feeds: Feeds | undefined;
  // Connects in the background: a Redis that is down at start only means going without it.
  const redis = config.redisUrl ? connectRedis({ url: config.redisUrl, logger }) : undefined;
  try {
    database = await connectDatabase({
      uri,
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
    const opened = await openFeeds(
      database.db,
      config,
      logger,
      config.changeFeed.postgresUrl ?? embedded?.postgresUrl,
    );
    feeds = opened;
    const { products: productFeed, orders: orderFeed, totals, beforeImages, logEvents } = opened;
    const liveOrders = createLiveOrders(orderFeed, config.liveOrders, (error) =>
      logger.warn({ err: error }, 'a changed order could not be offered to its live subscribers; skipped'),
    );
    const secret = await resolveJwtSecret(config);
    const resolveViewer = createViewerResolver(
      { ...config.jwt, secret },
      {
        // At most one line per cool-down (30 s): fetches are never more frequent.
        onKeySetFailure: (error) =>
          logger.warn(
            { err: { message: error.message } },
            'fetching the JWKS failed; tokens it signs are refused',
          ),
      },
    );
    const drain = createDrain();
    let pipelineOverflows = 0;
    // Loaded only when tracing is on: off, no OpenTelemetry module is imported at all.
    const tracing = config.tracing
      ? await import('./observability/use-graphql-tracing').then(
          ({ graphqlTracingPlugins, activeTraceId }) => ({
            plugins: graphqlTracingPlugins,
            traceId: activeTraceId,
          }),
        )
      : undefined;
    const app = createApp({
      tracing,
      config,
      database,
      resolveViewer,
      logger,
      isDraining: () => drain.draining,
      redis,
      databaseDescription,
      productFeed,
      keptTotals: { totals, beforeImages },
      logEvents,
      liveOrders,
      edges: [
        apiDocsEdge({ serverUrl: config.publicBaseUrl, compressionMinBytes: config.compressionMinBytes }),
      ],
      bodiesLimitedUpstream: true,
      connectionRefusals: () => ({ ...caps.refused(), 'pipelined-requests': pipelineOverflows }),
    });

    const server = createServer(
      { keepAliveTimeout: 5_000, requestTimeout: 30_000, headersTimeout: 10_000, ...NODE_SERVER_OPTIONS },
      drain.wrap(
        eventStreamsIdleLonger(
          oneRequestPerConnection(guardRequests(app, { maxBodyBytes: config.maxBodyBytes }), {
            maxWaiting: PIPELINED_WAITING,
            onOverflow: () => (pipelineOverflows += 1),
          }),
        ),
      ),
    );
    answerClientErrors(server, (code) => logger.info({ code }, 'client error'));
    const caps = capConnections(server, {
      ...config.connectionCaps,
      trustedProxies: config.rateLimit.trustedProxies,
      onRefused: (reason, connections) =>
        logger.warn(
          { reason, connections },
          'connections refused: a connection cap (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS) is reached',
        ),
    });
    // A socket with nothing read or written for this long is closed, with whatever it held: a
    // client that never reads its answer stalls the writes (150 such held 1.6 GB, never let go).
    // It must outlast a request's silent database work (several reads of MONGODB_TIMEOUT_MS each).
    server.setTimeout(Math.max(SOCKET_IDLE_TIMEOUT_MS, 3 * config.mongo.timeoutMs));
    const address = await listen(server, config.host, config.port);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;

    let closing: Promise<void> | undefined;
    const db = database;
    const followed = feeds;
    // /readyz turns 503 and every response says `Connection: close`; the listener closes; in-flight
    // requests finish and their sockets close after the answer; idle keep-alive sockets close once
    // no request has been open for a moment (node:http's close() destroyed them at once, and a
    // client whose next request was already on the wire got a reset); then the driver closes. At
    // the deadline what is still open is answered 503, and a second later cut.
    const close = (deadlineMs = config.shutdownDeadlineMs): Promise<void> =>
      (closing ??= (async () => {
        drain.start(() => server.closeIdleConnections());
        // Each live subscription gets a last event that says when to subscribe again, and completes.
        const streams = liveOrders.endAll(shuttingDown(RESUBSCRIBE_AFTER_S));
        if (streams > 0) logger.info({ streams }, 'shutdown: ended the live subscriptions');
        const drained = new Promise<void>((resolve) =>
          net.Server.prototype.close.call(server, () => resolve()),
        );
        let cutTimer: NodeJS.Timeout | undefined;
        const deadline = setTimeout(() => {
          const expired = drain.expire();
          if (expired > 0) logger.warn({ requests: expired }, 'shutdown deadline: answered 503');
          server.closeIdleConnections();
          cutTimer = setTimeout(() => server.closeAllConnections(), 1_000);
        }, deadlineMs);
        await drained;
        clearTimeout(deadline);
        clearTimeout(cutTimer);
        liveOrders.close();
        await followed.close();
        await db
          .close()
          .catch((error: unknown) => logger.warn({ err: error }, 'closing the database client failed'));
        await redis?.close();
        await unpublish?.();
        await embedded?.stop();
      })());

    return { url, port: address.port, app, http: server, database, embedded, redis, liveOrders, close };
  } catch (error) {
    await feeds?.close();
    await database?.close().catch(() => undefined);
    await redis?.close();
    await unpublish?.();
    await embedded?.stop();
    throw error;
  }
}
