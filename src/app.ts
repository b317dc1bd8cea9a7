import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { Kind, OperationTypeNode, type DocumentNode } from 'graphql';
import { createLRUCache, createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Document } from 'mongodb';
import type { ViewerResolver } from './auth/tokens';
import type { ChangeFeed } from './db/change-feed';
import type { Config } from './config';
import { createContext, isRestExecution, type AppContext } from './context';
import { createQueryLanes } from './db/guards/query-lanes';
import type { LiveOrders } from './db/orders/live-orders';
import { createLiveStreams } from './limits/live-streams';
import { createFleetSlots } from './limits/live-fleet-slots';
import { guardRepository, isAdmissionOutcome } from './db/guards/deadline';
import { isDatabaseUnavailable, pingDatabase, type Database } from './db/mongo';
import { createOrderRepository } from './db/orders/order-repository';
import type { IndexEvent } from './db/guards/index-keeper';
import { createUnreadableReport } from './observability/unreadable-log';
import { createProductRepository } from './db/catalog/product-repository';
import { countUnindexed } from './db/catalog/product-search';
import { createTotalCache, type TotalCache } from './db/catalog/total-cache';
import { followTotals } from './db/derived/total-moves';
import type { BeforeImages } from './db/derived/search-state';
import { asUnexpected, serviceUnavailable } from './errors';
import { GRAPHIQL_SITE } from './graphiql';
import { GRAPHQL_LIMITS, useGraphqlLimits } from './graphql-limits';
import { graphqlResponseCachePlugins } from './graphql-response-cache';
import { compressionEdge } from './http/use-compression';
import { graphiqlEdge } from './http/use-graphiql';
import { useClientErrors } from './http/use-client-errors';
import { healthEdge } from './http/use-health';
import { httpGuardsEdge } from './http/use-http-guards';
import { metricsAccessEdge, metricsServed } from './http/use-metrics-access';
import type { LogEvents } from './db/feed/open-feeds';
import { cacheScopeOf } from './db/derived/cache-scope';
import { notFoundEdge } from './http/use-not-found';
import { requestLogEdge } from './http/use-request-log';
import { useResponseLimit } from './http/use-response-limit';
import { useRouter, type Edge } from './http/router';
import { createRouteLabel, type RouteLabel } from './http/routes';
import { startPageEdge } from './http/use-start-page';
import { createClientKey } from './limits/client-key';
import { createClientLimiter } from './limits/limiter';
import { RATE_LIMIT_HEADER_NAMES } from './limits/responses';
import { useRateLimits } from './limits/use-rate-limits';
import { operationNames } from './persisted/manifest';
import { knownDocuments, persistedDocumentPlugins } from './persisted/use-persisted-documents';
import type { Logger } from './logger';
import { createErrorLog } from './observability/error-log';
import {
  createMetrics,
  registerLogFeedMetrics,
  registerTotalCounts,
  registerFeedLagGauge,
  registerLiveSubscriptionsGauge,
  registerRedisCircuit,
  registerUnindexedGauge,
} from './observability/metrics';
import { matchEndpoint, REST_ENDPOINTS } from './rest/endpoints';
import { createPageCache } from './rest/page-cache';
import { useRestApi } from './rest/use-rest-api';
import { schema } from './schema/index';
import type { SharedRedis } from './store/redis';
import { createRedisResponseStore, purgeOnChange, responseStores } from './store/response-store';

export interface AppDependencies {
  config: Config;
  database: Database;
  resolveViewer: ViewerResolver;
  logger: Logger;
  /** True once shutdown has begun: /readyz then answers 503. */
  isDraining?: () => boolean;
  /** The fleet's shared store (REDIS_URL); absent: every cache and limit is per process. */
  redis?: SharedRedis;
  /** The database in words, for the start page; the process entry knows which it opened. */
  databaseDescription?: string;
  /** The live orders hub (src/db/orders/live-orders.ts); absent: subscriptions answer SERVICE_UNAVAILABLE. */
  liveOrders?: LiveOrders;
  /** The products change feed (src/db/change-feed.ts): search and caches follow it. */
  productFeed?: ChangeFeed<Document>;
  /** Totals the server drops on the feed's changes, and the before-images that adjust them (src/server.ts). */
  keptTotals?: { totals: TotalCache; beforeImages?: BeforeImages };
  /** What the log's slot went through, where the feed reads the engine's log (src/db/feed/open-feeds.ts). */
  logEvents?: LogEvents;
  /** Extra routes answered before the APIs, after the rate limits (e.g. the API docs). */
  edges?: Edge[];
  /** Extra plugins, after the rate limits' (bench/http-floor.ts). */
  plugins?: Plugin[];
  /** Set when OpenTelemetry tracing is on (src/observability/use-graphql-tracing.ts). */
  tracing?: AppTracing;
  /**
   * The HTTP server in front counts bodies as they arrive (src/http/node-guards.ts). Then Yoga's
   * own limit is off: it pipes every POST body through a stream transform (~10 % of a small
   * GraphQL request's CPU). Unset (yoga.fetch in-process), Yoga limits bodies itself.
   */
  bodiesLimitedUpstream?: boolean;
  /** Connections refused by the caps in front (src/limits/connection-caps.ts), for the metrics. */
  connectionRefusals?: () => Readonly<Record<string, number>>;
}

export interface AppTracing {
  /** The HTTP span's route name (by the route label given) and the GraphQL parse, validate and execute spans. */
  plugins: (routeLabel: RouteLabel) => { edge: Edge; plugins: Plugin[] };
  /** The trace id of the current request, for its log line. */
  traceId: () => string | undefined;
}

/**
 * The headers that mark a GraphQL request as not "simple" (a browser preflights it under CORS).
 * Yoga's own, and Apollo Client's two, so its users need no change.
 */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'apollo-require-preflight', 'x-apollo-operation-name'];

const GRAPHQL_ENDPOINT = '/graphql';

/** Parsed documents (with their validation and compiled executors) kept for reuse. */
const PARSED_DOCUMENTS = 64;

export type App = YogaServerInstance<Record<string, unknown>, AppContext>;

/** A new request whose query would wait longer than this for its lane is answered 503 at once. */
const QUEUE_WAIT_MS = 1_000;
/** All of a request's database calls end within MONGODB_TIMEOUT_MS + this of its first (src/db/guards/deadline.ts). */
const REQUEST_GRACE_MS = 500;

/** The Yoga instance that serves /graphql and /api/v1 from one schema and one data path. */
export function createApp(deps: AppDependencies): App {
  const { config, database, resolveViewer, logger, redis } = deps;
  const persistedDocuments = knownDocuments(
    config.persistedOperations,
    REST_ENDPOINTS.map((endpoint) => endpoint.document),
  );
  const metrics = config.metrics
    ? createMetrics({
        operationNames: operationNames(persistedDocuments.values()),
        externalRefusals: deps.connectionRefusals,
      })
    : undefined;
  const errorLog = createErrorLog(logger);
  const routeLabel = createRouteLabel((pathname) => matchEndpoint(pathname)?.endpoint.path);
  if (metrics) {
    registerUnindexedGauge(metrics.registry, () => countUnindexed(database.db));
    if (deps.productFeed) registerFeedLagGauge(metrics.registry, [deps.productFeed]);
    if (deps.logEvents) registerLogFeedMetrics(metrics.registry, deps.logEvents);
    if (deps.liveOrders) registerLiveSubscriptionsGauge(metrics.registry, deps.liveOrders.count);
    if (redis) registerRedisCircuit(metrics.registry, redis);
  }
  const countCacheLookup = (result: 'hit' | 'miss') => metrics?.cacheLookups.inc({ result });
  const feed = deps.productFeed;
  // Admission control: lookups by key get their own lane, so scans cannot starve an order or a node.
  const { timeoutMs, admission } = config.mongo;
  const settleMs = timeoutMs + 1_000; // one database deadline: reads begun before a change have ended
  const stores = responseStores(
    redis && createRedisResponseStore(redis, config.responseCacheBudget),
    config.responseCacheBudget,
    settleMs,
    feed?.mode === 'log' ? () => feed.handedOn() : undefined,
  );
  const responseStore = stores.create;
  const cacheOn = config.responseCacheTtlMs > 0;
  const { maxAgeSeconds, staleWhileRevalidateSeconds } = config.httpCache;
  const publicCacheControl = `public, max-age=${maxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;
  // Calls should finish within half the deadline; slower ones mean too many run at once.
  const limits = { ...admission, maxWaitMs: QUEUE_WAIT_MS, giveUpMs: timeoutMs, slowMs: timeoutMs / 2 };
  const { laneOf } = createQueryLanes(limits, admission.wordScans, admission.wordScanShare);
  const guard = { timeoutMs, graceMs: REQUEST_GRACE_MS, laneOf, observe: metrics?.observeQuery };
  const onUnreadable = createUnreadableReport(logger, (collection) =>
    metrics?.unreadableDocuments.inc({ collection }),
  );
  const onIndexEvent = (event: IndexEvent) => {
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
  const reading = { maxTimeMS: timeoutMs, onUnreadable, onIndexEvent };
  const { totals, beforeImages } = deps.keptTotals ?? { totals: createTotalCache() };
  if (metrics) registerTotalCounts(metrics.registry, totals.counts);
  const liveStreams =
    deps.liveOrders &&
    createLiveStreams(deps.liveOrders, {
      trustedProxies: config.rateLimit.trustedProxies,
      fleet: redis && createFleetSlots({ redis, perCustomer: config.liveOrders.perCustomer }),
    });
  const contextDeps = {
    products: guardRepository(
      'products',
      createProductRepository(database.db, { ...reading, feed: deps.productFeed, totals, beforeImages }),
      guard,
    ),
    orders: guardRepository('orders', createOrderRepository(database.db, reading), guard),
    resolveViewer,
    openLiveStream: liveStreams?.open,
    storeLocale: config.storeLocale,
  };

  // GraphiQL sends arbitrary documents, which trusted-only refuses: it is off in that mode.
  const graphiql = config.introspection && config.persistedOperations.mode !== 'trusted-only';
  const { rateLimit } = config;
  const clientKey = createClientKey({ resolveViewer, trustedProxies: rateLimit.trustedProxies });
  const limiter = (name: string, pointsPerMinute: number) =>
    pointsPerMinute > 0
      ? createClientLimiter({ name, pointsPerMinute, redis, failOpen: rateLimit.failOpen })
      : undefined;

  if (
    config.env === 'production' &&
    rateLimit.requestsPerMinute > 0 &&
    rateLimit.trustedProxies.length === 0
  ) {
    logger.warn(
      'rate limits count by peer address and TRUSTED_PROXIES is empty: behind a load balancer, set it',
    );
  }

  const metricsAccess = { token: config.metricsToken, openWithoutToken: config.env !== 'production' };
  const clientErrors = useClientErrors({ logger });
  const tracing = deps.tracing?.plugins(routeLabel);
  const rateLimits = useRateLimits({
    requests: limiter('requests', rateLimit.requestsPerMinute),
    cost: limiter('cost', rateLimit.costPerMinute),
    clientKey,
    isTrusted: isRestExecution,
  });
  const responseCache = cacheOn
    ? graphqlResponseCachePlugins({
        ttlMs: config.responseCacheTtlMs,
        store: responseStore(),
        // /api/v1 keeps its own finished-bytes page cache.
        skip: isRestExecution,
        publicCacheControl,
        answerStoredBytes: config.persistedOperations.mode !== 'trusted-only',
        onLookup: countCacheLookup,
      })
    : undefined;
  const restApi = useRestApi({
    publicBaseUrl: config.publicBaseUrl,
    pageCache: cacheOn
      ? createPageCache(responseStore(), config.responseCacheTtlMs, staleWhileRevalidateSeconds * 1000)
      : undefined,
    publicCacheControl,
    onCacheLookup: countCacheLookup,
    onUnexpectedError: (error, request) =>
      errorLog.error(error, 'unexpected error in /api/v1', { path: new URL(request.url).pathname }),
  });
  const responseLimit = useResponseLimit({
    maxBytes: config.maxResponseBytes,
    maxBytesInFlight: config.maxResponseBytesInFlight,
    onOverBudget: () => metrics?.refusals.inc({ reason: 'response-bytes' }),
  });

  const yoga = createYoga<Record<string, unknown>, AppContext>({
    schema,
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    landingPage: false,
    context: ({ request, ...serverContext }) => createContext(request, contextDeps, serverContext),
    // Served by graphiqlEdge below: built and compressed once, and rate-limited.
    graphiql: false,
    batching: { limit: GRAPHQL_LIMITS.maxBatch },
    // Each parsed document keeps its validation result and its graphql-jit executor (a document of
    // 20 aliased fields compiles to ~2 MB): Yoga's default of 1,024 documents a client can fill with
    // unique ones was over 2 GB. The operations a store's clients repeat fit in far fewer.
    parserAndValidationCache: {
      documentCache: createLRUCache({ max: PARSED_DOCUMENTS }),
      errorCache: createLRUCache({ max: PARSED_DOCUMENTS }),
    },
    maxRequestBodySize: deps.bodiesLimitedUpstream ? false : config.maxBodyBytes,
    cors:
      config.corsOrigins.length > 0
        ? {
            origin: config.corsOrigins,
            methods: ['GET', 'HEAD', 'POST'],
            allowedHeaders: ['authorization', 'content-type', 'x-request-id', ...CSRF_HEADERS],
            exposedHeaders: ['x-request-id', 'retry-after', 'etag', 'x-cache', ...RATE_LIMIT_HEADER_NAMES],
            maxAge: 600,
          }
        : false,
    logging: {
      debug: (...args) => logger.debug(args.map(String).join(' ')),
      info: (...args) => logger.info(args.map(String).join(' ')),
      warn: (...args) => logger.warn(args.map(String).join(' ')),
      // A refused or abandoned database call is the admission control working, not a failure:
      // one line each would let an overload write the log as fast as it is refused.
      error: (...args) =>
        isAdmissionOutcome(args[0]) ? undefined : errorLog.error(args[0], 'graphql server error'),
    },
    maskedErrors: {
      // Never expose internals, not even in development; a lost database is a retryable 503.
      maskError(error, message) {
        const original = (error as { originalError?: unknown }).originalError ?? error;
        if (isDatabaseUnavailable(original)) return serviceUnavailable();
        // Yoga logs what this masks (logging.error above): once, with the original error.
        return maskError(asUnexpected(error), message, false);
      },
    },
    plugins: [
      // Every request's routing and its guards at both edges, in this order (src/http/router.ts).
      useRouter([
        requestLogEdge({
          logger: config.requestLog ? logger : undefined,
          metrics,
          routeLabel,
          traceId: deps.tracing?.traceId,
        }),
        httpGuardsEdge(),
        healthEdge({
          pingDatabase: () => pingDatabase(database.db),
          isDraining: deps.isDraining,
          pingSharedStore: redis && (() => redis.ping()),
          // Failing closed, the limits refuse every API request while Redis does not answer.
          sharedStoreRequired:
            !rateLimit.failOpen && (rateLimit.requestsPerMinute > 0 || rateLimit.costPerMinute > 0),
        }),
        ...(metrics ? [metricsAccessEdge(metricsAccess), metrics.edge] : []),
        startPageEdge({
          graphiql,
          adHocQueries: config.persistedOperations.mode !== 'trusted-only',
          metrics: metrics ? metricsServed(metricsAccess) : 'off',
          database: deps.databaseDescription,
          publicBaseUrl: config.publicBaseUrl,
          liveOrdersDemo: config.env !== 'production' && config.persistedOperations.mode !== 'trusted-only',
        }),
        clientErrors.edge,
        ...(tracing ? [tracing.edge] : []),
        // After the client errors: a request refused as malformed is not counted.
        rateLimits.edge,
        ...(deps.edges ?? []),
        ...(liveStreams ? [liveStreams.edge] : []),
        ...(graphiql ? [graphiqlEdge({ ...GRAPHIQL_SITE, compressed: config.compressionMinBytes > 0 })] : []),
        ...(responseCache?.edges ?? []),
        restApi.edge,
        // After every route of its own: the rest is a 404, /graphql is Yoga's.
        notFoundEdge({ graphqlEndpoint: GRAPHQL_ENDPOINT }),
        responseLimit.edge,
        // Last, so it sees every other edge's final response.
        ...(config.compressionMinBytes > 0
          ? [compressionEdge({ minBytes: config.compressionMinBytes })]
          : []),
      ]),
      ...(metrics ? [metrics.plugin] : []),
      clientErrors.plugin,
      // GET and form/text POSTs to /graphql need one of these headers; /api/v1 never parses a
      // GraphQL request, so its contract is untouched.
      useCSRFPrevention({ requestHeaders: CSRF_HEADERS }),
      ...(tracing?.plugins ?? []),
      useGraphqlLimits({ hideSuggestions: !config.introspection, isTrusted: isRestExecution }),
      ...(config.introspection ? [] : [useDisableIntrospection()]),
      // After the static limits: a document they refuse is neither charged nor registered.
      rateLimits.plugin,
      ...(deps.plugins ?? []),
      ...(liveStreams ? [liveStreams.plugin] : []),
      ...persistedDocumentPlugins(config.persistedOperations, persistedDocuments, clientKey, redis),
      // Compiles each distinct document once (the REST operations included) into a fast executor.
      useGraphQlJit({}, { enableIf: ({ document }) => isSingleQuery(document) }),
      ...(responseCache?.plugins ?? []),
      restApi.plugin,
      responseLimit.plugin,
    ],
  });
  const { productFeed } = deps;
  if (productFeed) {
    // Every instance follows the feed and purges its own caches (and the shared one: idempotent).
    // Answers read before a change and stored after its purge are refused; a shared store is purged
    // once more a database deadline later, for the instances whose feeds are behind this one's.
    purgeOnChange(
      (listener) => productFeed.subscribe((batch) => listener(cacheScopeOf(batch))),
      [...stores.all],
      stores.purges,
      settleMs,
    );
    if (!deps.keptTotals) followTotals(productFeed, totals);
  }
  return yoga;
}

/**
 * One operation, not a subscription: what graphql-jit runs. It caches per document, not per
 * operation, so a document with several operations (as GraphiQL's default) would run whichever
 * was picked first: those stay on graphql-js. Subscriptions too: graphql-jit's subscribe gave the
 * field's `subscribe` no arguments (a filtered live list sent every order), and a live stream's
 * one plan is no hot path.
 */
function isSingleQuery(document: DocumentNode): boolean {
  const operations = document.definitions.filter(
    (definition) => definition.kind === Kind.OPERATION_DEFINITION,
  );
  return operations.length === 1 && operations[0]?.operation !== OperationTypeNode.SUBSCRIPTION;
}
