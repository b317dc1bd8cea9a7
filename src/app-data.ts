import type { AppDependencies } from './app-dependencies';
import type { ContextDependencies } from './context';
import { createProductRepository } from './db/catalog/product-repository';
import { countUnindexed } from './db/catalog/product-search';
import { createTotalCache } from './db/catalog/total-cache';
import { guardRepository } from './db/guards/deadline';
import type { IndexEvent } from './db/guards/index-keeper';
import { createQueryLanes } from './db/guards/query-lanes';
import { createOrderRepository } from './db/orders/order-repository';
import { createFleetSlots } from './limits/live-fleet-slots';
import { createLiveStreams } from './limits/live-streams';
import type { Logger } from './logger';
import {
  registerFeedLagGauge,
  registerLiveSubscriptionsGauge,
  registerLogFeedMetrics,
  registerRedisCircuit,
  registerTotalCounts,
  registerUnindexedGauge,
  type Metrics,
} from './observability/metrics';
import { createUnreadableReport } from './observability/unreadable-log';

/** A new request whose query would wait longer than this for its lane is answered 503 at once. */
const QUEUE_WAIT_MS = 1_000;
/** All of a request's database calls end within MONGODB_TIMEOUT_MS + this of its first (src/db/guards/deadline.ts). */
const REQUEST_GRACE_MS = 500;

/**
 * The data path every request shares, GraphQL and /api/v1 alike: the repositories behind their
 * deadline and admission lanes (lookups by key get their own lane, so scans cannot starve an order
 * or a node), the kept totals, and the live streams.
 */
export function createDataPath(deps: AppDependencies, metrics: Metrics | undefined) {
  const { config, database, logger, redis } = deps;
  const { timeoutMs, admission } = config.mongo;
  // Calls should finish within half the deadline; slower ones mean too many run at once.
  const limits = { ...admission, maxWaitMs: QUEUE_WAIT_MS, giveUpMs: timeoutMs, slowMs: timeoutMs / 2 };
  const { laneOf } = createQueryLanes(limits, admission.wordScans, admission.wordScanShare);
  const guard = { timeoutMs, graceMs: REQUEST_GRACE_MS, laneOf, observe: metrics?.observeQuery };
  const onUnreadable = createUnreadableReport(logger, (collection) =>
    metrics?.unreadableDocuments.inc({ collection }),
  );
  const reading = { maxTimeMS: timeoutMs, onUnreadable, onIndexEvent: indexEventReport(logger, metrics) };
  const { totals, beforeImages } = deps.keptTotals ?? { totals: createTotalCache() };
  if (metrics) registerTotalCounts(metrics.registry, totals.counts);
  const liveStreams =
    deps.liveOrders &&
    createLiveStreams(deps.liveOrders, {
      trustedProxies: config.rateLimit.trustedProxies,
      fleet: redis && createFleetSlots({ redis, perCustomer: config.liveOrders.perCustomer }),
    });
  const contextDeps: ContextDependencies = {
    products: guardRepository(
      'products',
      createProductRepository(database.db, {
        ...reading,
        feed: deps.productFeed,
        totals,
        beforeImages,
        onSearchScan: (reason) => metrics?.searchScans.inc({ reason }),
      }),
      guard,
    ),
    orders: guardRepository('orders', createOrderRepository(database.db, reading), guard),
    resolveViewer: deps.resolveViewer,
    openLiveStream: liveStreams?.open,
    storeLocale: config.storeLocale,
  };
  return { totals, liveStreams, contextDeps };
}

function indexEventReport(logger: Logger, metrics: Metrics | undefined) {
  return (event: IndexEvent) => {
    metrics?.indexEvents.inc({ index: event.index, outcome: event.outcome });
    if (event.outcome === 'restored') logger.info({ index: event.index }, 'index created again');
    else if (event.outcome === 'missing')
      logger.warn({ index: event.index }, 'index missing: reads go without it while it is created again');
    else
      logger.warn(
        { index: event.index, err: event.error },
        'creating the missing index failed; tried again later',
      );
  };
}

/** The gauges /metrics reads from what the process follows. */
export function registerAppGauges(metrics: Metrics, deps: AppDependencies): void {
  registerUnindexedGauge(metrics.registry, () => countUnindexed(deps.database.db));
  if (deps.productFeed) registerFeedLagGauge(metrics.registry, [deps.productFeed]);
  if (deps.logEvents) registerLogFeedMetrics(metrics.registry, deps.logEvents);
  if (deps.liveOrders) registerLiveSubscriptionsGauge(metrics.registry, deps.liveOrders.count);
  if (deps.redis) registerRedisCircuit(metrics.registry, deps.redis);
}
