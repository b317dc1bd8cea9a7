import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { Kind, OperationTypeNode, type DocumentNode } from 'graphql';
import { createLRUCache, createYoga, type YogaServerInstance } from 'graphql-yoga';
import { createCaches } from './app-caches';
import { createDataPath, registerAppGauges } from './app-data';
import { createRateLimits } from './app-limits';
import { corsOf, CSRF_HEADERS, MASKED_ERRORS, yogaLogging } from './app-yoga-options';
import type { AppDependencies } from './app-dependencies';
import { createContext, isRestExecution, type AppContext } from './context';
import { pingDatabase } from './db/mongo';
import { followTotals } from './db/derived/total-moves';
import { GRAPHIQL_SITE } from './graphiql';
import { GRAPHQL_LIMITS, useGraphqlLimits } from './graphql-limits';
import { compressionEdge } from './http/use-compression';
import { graphiqlEdge } from './http/use-graphiql';
import { useClientErrors } from './http/use-client-errors';
import { healthEdge } from './http/use-health';
import { httpGuardsEdge } from './http/use-http-guards';
import { metricsAccessEdge, metricsServed } from './http/use-metrics-access';
import { notFoundEdge } from './http/use-not-found';
import { requestLogEdge } from './http/use-request-log';
import { useResponseLimit } from './http/use-response-limit';
import { useRouter, type Edge } from './http/router';
import { createRouteLabel } from './http/routes';
import { startPageEdge } from './http/use-start-page';
import { operationNames } from './persisted/manifest';
import { knownDocuments, persistedDocumentPlugins } from './persisted/use-persisted-documents';
import { createErrorLog } from './observability/error-log';
import { createMetrics, type Metrics } from './observability/metrics';
import { matchEndpoint, REST_ENDPOINTS } from './rest/endpoints';
import { useRestApi } from './rest/use-rest-api';
import { schema } from './schema/index';

export { CSRF_HEADERS } from './app-yoga-options';

const GRAPHQL_ENDPOINT = '/graphql';

/** Parsed documents (with their validation and compiled executors) kept for reuse. */
const PARSED_DOCUMENTS = 64;

export type { AppDependencies, AppTracing } from './app-dependencies';

export type App = YogaServerInstance<Record<string, unknown>, AppContext>;

/** The Yoga instance that serves /graphql and /api/v1 from one schema and one data path. */
export function createApp(deps: AppDependencies): App {
  const { config, logger, redis } = deps;
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
  if (metrics) registerAppGauges(metrics, deps);
  const caches = createCaches(deps, metrics);
  const { responseCache, pageCache, publicCacheControl, countCacheLookup } = caches;
  const { totals, liveStreams, contextDeps } = createDataPath(deps, metrics);

  // GraphiQL sends arbitrary documents, which trusted-only refuses: it is off in that mode.
  const graphiql = config.introspection && config.persistedOperations.mode !== 'trusted-only';
  const { rateLimits, clientKey } = createRateLimits(deps);
  const clientErrors = useClientErrors({ logger });
  const tracing = deps.tracing?.plugins(routeLabel);
  const restApi = useRestApi({
    publicBaseUrl: config.publicBaseUrl,
    pageCache,
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
    cors: corsOf(config),
    logging: yogaLogging(logger, errorLog),
    maskedErrors: MASKED_ERRORS,
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
        ...operatorEdges(deps, metrics, graphiql),
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
  // Subscribed after the repositories, in this order: the caches' purges, then the totals.
  caches.followFeed();
  if (deps.productFeed && !deps.keptTotals) followTotals(deps.productFeed, totals);
  return yoga;
}

/** What operators and people exploring reach: health, /metrics (behind its token), the start page. */
function operatorEdges(deps: AppDependencies, metrics: Metrics | undefined, graphiql: boolean): Edge[] {
  const { config, database, redis } = deps;
  const { rateLimit } = config;
  const metricsAccess = { token: config.metricsToken, openWithoutToken: config.env !== 'production' };
  return [
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
  ];
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
