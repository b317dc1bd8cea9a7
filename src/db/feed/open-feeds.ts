import type { Db, Document } from 'mongodb';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { openChangeFeed, type ChangeFeed } from '../change-feed';
import type { OrderDoc } from '../documents';
import { SEARCH_INDEX_COMMAND, WITHOUT_SEARCH_FIELDS } from '../catalog/product-search';
import { FEED_COMMENT } from '../feed-types';
import { syncSearchProjection } from '../derived/search-backfill';
import { followSearchGrams } from '../derived/search-grams-writer';
import { keepBeforeImages, type BeforeImages } from '../derived/search-state';
import { createTotalCache, type TotalCache } from '../catalog/total-cache';
import { followTotals } from '../derived/total-moves';
import { openLogSource, type LogSource } from './log';

/**
 * The server's change feeds and what follows them in the database: the products (their grams,
 * kept totals) and the orders (live subscriptions, subscribed by the caller). From the engine's
 * log where a PostgreSQL URL is known (the embedded database, or CHANGE_FEED_POSTGRES_URL), else
 * change streams, else polling.
 */

export interface Feeds {
  products: ChangeFeed<Document>;
  orders: ChangeFeed<OrderDoc>;
  totals: TotalCache;
  /** Only where polling needs them (src/db/catalog/total-adjust.ts); the log hands on every change exactly. */
  beforeImages?: BeforeImages;
  /** What the log's slot went through (for /metrics); absent without the log. */
  logEvents?: LogEvents;
  close(): Promise<void>;
}

export interface LogEvents {
  /** The lasting slot found lost (its WAL passed the bound, or gone with a restored backup). */
  slotsLost: number;
  /** Derived state rebuilt from the collections (a new or lost slot). */
  resyncs: number;
  /** Other databases' lasting slots dropped, abandoned (src/db/feed/log-abandoned.ts). */
  slotsDropped: number;
  /** Whether this instance holds the lasting slot (writes the derived state for the fleet). */
  leading(): boolean;
}

const warn = (logger: Logger, message: string) => (error: unknown) =>
  logger.warn({ err: { message: error instanceof Error ? error.message : String(error) } }, message);

async function openLog(
  db: Db,
  config: Config,
  postgresUrl: string,
  logger: Logger,
  events: LogEvents,
): Promise<LogSource> {
  return openLogSource({
    postgresUrl,
    dbName: db.databaseName,
    collections: ['products', 'orders'],
    waitMs: config.changeFeed.waitMs,
    abandonMs: config.changeFeed.slotAbandonMs,
    onSlotDropped: (slot) => {
      events.slotsDropped++;
      logger.warn(
        { slot },
        'change feed: dropped a log slot no gateway has served for CHANGE_FEED_SLOT_ABANDON_HOURS',
      );
    },
    onResync: async () => {
      const started = Date.now();
      const { checked, written } = await syncSearchProjection(db, {
        comment: FEED_COMMENT,
        onRefused: refusedRow(logger),
      });
      events.resyncs++;
      logger.info({ checked, written, ms: Date.now() - started }, 'change feed: the search grams resynced');
    },
    onSlotLost: () => {
      events.slotsLost++;
      logger.warn('change feed: the log slot was lost (the WAL it needed is gone); resyncing');
    },
    onError: (error, channel) => warn(logger, `following the log failed (${channel}); reopening`)(error),
  });
}

/** A product whose search row the database refused: searches scan (exact) until it changes. */
const refusedRow = (logger: Logger) => (id: unknown, error: unknown) =>
  logger.error(
    { _id: String(id), err: { message: error instanceof Error ? error.message : String(error) } },
    `a product's search row was refused; every search scans until it changes or \`${SEARCH_INDEX_COMMAND}\` runs`,
  );

/** The longest a start waits for the log's first resync (the grams): after it, searches scan until it ends. */
const START_WAIT_MS = 15_000;

async function awaitCaughtUp(log: LogSource, logger: Logger): Promise<void> {
  const deadline = Date.now() + START_WAIT_MS;
  while (Date.now() < deadline) {
    const { own, derived } = await log.caughtUp();
    if (own && derived) return;
  }
  logger.warn(
    'change feed: the log is still being caught up with; searches scan and totals are counted until then',
  );
}

export async function openFeeds(
  db: Db,
  config: Config,
  logger: Logger,
  postgresUrl: string | undefined,
): Promise<Feeds> {
  let log: LogSource | undefined;
  const logEvents: LogEvents = {
    slotsLost: 0,
    resyncs: 0,
    slotsDropped: 0,
    leading: () => log?.leading() ?? false,
  };
  if (postgresUrl) {
    log = await openLog(db, config, postgresUrl, logger, logEvents);
    await awaitCaughtUp(log, logger);
  }
  const products = await openChangeFeed<Document>(db, 'products', {
    ...config.changeFeed,
    log,
    maxTimeMS: config.mongo.timeoutMs,
    // Grams an older gateway wrote into the products: never read, never handed on.
    exclude: Object.keys(WITHOUT_SEARCH_FIELDS),
    onError: warn(logger, 'following the products failed; retrying from the saved position'),
  });
  logger.info({ mode: products.mode }, 'following the products collection');
  // Kept totals are dropped before a batch's before-images are written (src/db/catalog/total-adjust.ts):
  // a total adjusted while writes are pending never meets a before-image newer than its count.
  const totals = createTotalCache();
  followTotals(products, totals);
  followSearchGrams(products, db, {
    beforeImages: !log,
    onError: warn(
      logger,
      'syncing the search projection failed; searches scan what it lacks until it runs again',
    ),
    onRefused: refusedRow(logger),
  });
  const beforeImages = log
    ? undefined
    : await keepBeforeImages(
        db,
        warn(
          logger,
          "writing the products' before-images failed; totals are counted while writes are pending",
        ),
      );
  const orders = await openChangeFeed<OrderDoc>(db, 'orders', {
    ...config.changeFeed,
    log,
    maxTimeMS: config.mongo.timeoutMs,
    // Deletions are not live events (src/db/orders/live-orders.ts): no count of the orders.
    reportsDeletions: false,
    onError: warn(logger, 'following the orders failed; retrying from the saved position'),
  });
  return {
    products,
    orders,
    totals,
    beforeImages,
    logEvents: log ? logEvents : undefined,
    async close() {
      await products.close();
      await beforeImages?.close();
      await orders.close();
      await log?.close();
    },
  };
}
