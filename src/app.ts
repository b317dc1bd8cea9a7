import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { GraphQLError, Kind, type DocumentNode } from 'graphql';
import { createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { ViewerResolver } from './auth/tokens';
import type { Config } from './config';
import { createContext, isRestExecution, type AppContext } from './context';
import { withDeadline } from './db/deadline';
import { instrumented, type AsyncMethods } from './db/instrumented';
import { isDatabaseUnavailable, pingDatabase, type Database } from './db/mongo';
import { createOrderRepository } from './db/order-repository';
import { createProductRepository } from './db/product-repository';
import { countUnindexed } from './db/product-search';
import { serviceUnavailable } from './errors';
import { GRAPHIQL_DEFAULT_QUERY } from './graphiql';
import { GRAPHQL_LIMITS, useGraphqlLimits } from './graphql-limits';
import { graphqlResponseCachePlugins } from './graphql-response-cache';
import { useCompression } from './http/use-compression';
import { useClientErrors } from './http/use-client-errors';
import { useHealth } from './http/use-health';
import { useHttpGuards } from './http/use-http-guards';
import { useMetricsAccess } from './http/use-metrics-access';
import { useRequestLog } from './http/use-request-log';
import { useStartPage } from './http/use-start-page';
import { createClientKey } from './limits/client-key';
import { createClientLimiter } from './limits/limiter';
import { RATE_LIMIT_HEADER_NAMES } from './limits/responses';
import { useRateLimits } from './limits/use-rate-limits';
import { persistedDocumentPlugins } from './persisted/use-persisted-documents';
import type { Logger } from './logger';
import { createMetrics, registerUnindexedGauge } from './observability/metrics';
import { createPageCache } from './rest/page-cache';
import { useRestApi } from './rest/use-rest-api';
import { schema } from './schema/index';
import type { SharedRedis } from './store/redis';
import {
  createProcessResponseStore,
  createRedisResponseStore,
  type ResponseStore,
} from './store/response-store';

export interface AppDependencies {
  config: Config;
  database: Database;
  resolveViewer: ViewerResolver;
  logger: Logger;
  /** True once shutdown has begun: /readyz then answers 503. */
  isDraining?: () => boolean;
  /** The fleet's shared store (REDIS_URL); absent: every cache and limit is per process. */
  redis?: SharedRedis;
  /** Extra plugins that answer before the APIs (e.g. the API docs). */
  plugins?: Plugin[];
  /** Set when OpenTelemetry tracing is on (src/observability/use-graphql-tracing.ts). */
  tracing?: AppTracing;
  /**
   * The HTTP server in front counts bodies as they arrive (src/http/node-guards.ts). Then Yoga's
   * own limit is off: it pipes every POST body through a stream transform (~10 % of a small
   * GraphQL request's CPU). Unset (yoga.fetch in-process), Yoga limits bodies itself.
   */
  bodiesLimitedUpstream?: boolean;
}

export interface AppTracing {
  /** The HTTP span's route name and the GraphQL parse, validate and execute spans. */
  plugins: Plugin[];
  /** The trace id of the current request, for its log line. */
  traceId: () => string | undefined;
}

/**
 * The headers that mark a GraphQL request as not "simple" (a browser preflights it under CORS).
 * Yoga's own, and Apollo Client's two, so its users need no change.
 */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'apollo-require-preflight', 'x-apollo-operation-name'];

export type App = YogaServerInstance<Record<string, unknown>, AppContext>;

/** The Yoga instance that serves /graphql and /api/v1 from one schema and one data path. */
export function createApp(deps: AppDependencies): App {
  const { config, database, resolveViewer, logger, redis } = deps;
  const metrics = config.metrics ? createMetrics() : undefined;
  if (metrics)
    registerUnindexedGauge(metrics.registry, () => countUnindexed(database.db.collection('products')));
  const countCacheLookup = (result: 'hit' | 'miss') => metrics?.cacheLookups.inc({ result });
  const timed = <T extends AsyncMethods>(name: string, repository: T): T =>
    metrics ? instrumented(name, repository, metrics.observeQuery) : repository;
  // One store per cache without Redis (each has its own byte budget); one shared store with it.
  const responseStore = (): ResponseStore =>
    redis
      ? createRedisResponseStore(redis, config.responseCacheBudget)
      : createProcessResponseStore(config.responseCacheBudget);
  const cacheOn = config.responseCacheTtlMs > 0;
  const { maxAgeSeconds, staleWhileRevalidateSeconds } = config.httpCache;
  const publicCacheControl = `public, max-age=${maxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;
  const contextDeps = {
    products: timed(
      'products',
      withDeadline(
        'products',
        createProductRepository(database.db, { maxTimeMS: config.mongo.timeoutMs }),
        config.mongo.timeoutMs,
      ),
    ),
    orders: timed(
      'orders',
      withDeadline(
        'orders',
        createOrderRepository(database.db, { maxTimeMS: config.mongo.timeoutMs }),
        config.mongo.timeoutMs,
      ),
    ),
    resolveViewer,
    storeLocale: config.storeLocale,
  };

  // GraphiQL sends arbitrary documents, which trusted-only refuses: it is off in that mode.
  const graphiql = config.introspection && config.persistedOperations.mode !== 'trusted-only';
  const { rateLimit } = config;
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

  return createYoga<Record<string, unknown>, AppContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    context: ({ request }) => createContext(request, contextDeps),
    graphiql: graphiql ? { title: 'Storefront Gateway', defaultQuery: GRAPHIQL_DEFAULT_QUERY } : false,
    // Served from the package, not a CDN, so it works offline. The renderer is a 9 MB module:
    // loaded on the first visit, not by every server process at start.
    renderGraphiQL: async (options) =>
      (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
    batching: { limit: GRAPHQL_LIMITS.maxBatch },
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
      error: (...args) => logger.error({ err: args[0] }, 'graphql server error'),
    },
    maskedErrors: {
      // Never expose internals, not even in development; a lost database is a retryable 503.
      maskError(error, message) {
        const original = (error as { originalError?: unknown }).originalError ?? error;
        if (isDatabaseUnavailable(original)) return serviceUnavailable();
        const masked = maskError(asUnexpected(error), message, false);
        if (masked !== error) logger.error({ err: original }, 'unexpected error');
        return masked;
      },
    },
    plugins: [
      useRequestLog({
        logger: config.requestLog ? logger : undefined,
        metrics,
        traceId: deps.tracing?.traceId,
      }),
      useHttpGuards(),
      useHealth({
        pingDatabase: () => pingDatabase(database.db),
        isDraining: deps.isDraining,
        sharedStoreReady: redis && (() => redis.isReady()),
      }),
      ...(metrics
        ? [
            useMetricsAccess({ token: config.metricsToken, openWithoutToken: config.env !== 'production' }),
            metrics.plugin,
          ]
        : []),
      useStartPage({ graphiql }),
      ...(deps.plugins ?? []),
      useClientErrors({ logger }),
      // GET and form/text POSTs to /graphql need one of these headers; /api/v1 never parses a
      // GraphQL request, so its contract is untouched.
      useCSRFPrevention({ requestHeaders: CSRF_HEADERS }),
      ...(deps.tracing?.plugins ?? []),
      useGraphqlLimits({ hideFieldSuggestions: !config.introspection, isTrusted: isRestExecution }),
      ...(config.introspection ? [] : [useDisableIntrospection()]),
      // After the static limits: a document they refuse is neither charged nor registered.
      useRateLimits({
        requests: limiter('requests', rateLimit.requestsPerMinute),
        cost: limiter('cost', rateLimit.costPerMinute),
        clientKey: createClientKey({ resolveViewer, trustedProxies: rateLimit.trustedProxies }),
        isTrusted: isRestExecution,
      }),
      ...persistedDocumentPlugins(config.persistedOperations, redis),
      // Compiles each distinct document once (the REST operations included) into a fast executor.
      // It caches per document, not per operation, so a document with several operations (as
      // GraphiQL's default) would run whichever was picked first: those stay on graphql-js.
      useGraphQlJit({}, { enableIf: ({ document }) => operationCount(document) === 1 }),
      ...(cacheOn
        ? graphqlResponseCachePlugins({
            ttlMs: config.responseCacheTtlMs,
            store: responseStore(),
            // /api/v1 keeps its own finished-bytes page cache.
            skip: isRestExecution,
            publicCacheControl,
            answerStoredBytes: config.persistedOperations.mode !== 'trusted-only',
            onLookup: countCacheLookup,
          })
        : []),
      useRestApi({
        publicBaseUrl: config.publicBaseUrl,
        pageCache: cacheOn ? createPageCache(responseStore(), config.responseCacheTtlMs) : undefined,
        publicCacheControl,
        onCacheLookup: countCacheLookup,
        onUnexpectedError: (error, request) =>
          logger.error({ err: error, path: new URL(request.url).pathname }, 'unexpected error in /api/v1'),
      }),
      // Last, so it sees every other plugin's final response.
      ...(config.compressionMinBytes > 0 ? [useCompression({ minBytes: config.compressionMinBytes })] : []),
    ],
  });
}

function operationCount(document: DocumentNode): number {
  return document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION).length;
}

/**
 * Our expected errors always carry `extensions.code`. An execution error without one (graphql-jit
 * raises "Cannot return null for non-nullable field …" as a bare GraphQLError, where graphql-js
 * wraps a plain Error) is unexpected, so it is given an original error and masked like any other.
 */
function asUnexpected(error: unknown): unknown {
  if (!(error instanceof GraphQLError) || error.originalError || error.extensions?.code || !error.path)
    return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    path: error.path,
    originalError: new Error(error.message),
  });
}
