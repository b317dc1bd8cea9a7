import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { useGraphQlJit } from '@envelop/graphql-jit';
import {
  envelop,
  useEngine,
  useMaskedErrors,
  useSchema,
  useValidationRule,
  type Plugin as EnvelopPlugin,
} from '@envelop/core';
import { normalizedExecutor } from '@graphql-tools/executor';
import {
  Kind,
  NoSchemaIntrospectionCustomRule,
  OperationTypeNode,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
} from 'graphql';
import { MongoClient, type Db } from 'mongodb';
import { createViewerResolver } from '../src/auth/tokens';
import type { Config } from '../src/config';
import { createContext } from '../src/context';
import { createLane } from '../src/db/guards/admission';
import { guardRepository } from '../src/db/guards/deadline';
import { createOrderRepository } from '../src/db/orders/order-repository';
import { createProductRepository } from '../src/db/catalog/product-repository';
import { createTotalCache } from '../src/db/catalog/total-cache';
import { estimateCost } from '../src/graphql-cost';
import { GRAPHQL_LIMITS, useGraphqlLimits } from '../src/graphql-limits';
import { documentNestsDeeperThan, nestsDeeperThan } from '../src/graphql-nesting';
import { guardRequests } from '../src/http/node-guards';
import { useClientErrors } from '../src/http/use-client-errors';
import { createClientKey } from '../src/limits/client-key';
import { createClientLimiter } from '../src/limits/limiter';
import { rateLimitHeaders } from '../src/limits/responses';
import { createLogger } from '../src/logger';
import { createMetrics } from '../src/observability/metrics';
import { schema } from '../src/schema/index';

/**
 * Issue 29's next lever, measured before it is built (`npm run bench:http-floor`, `lever-proto`):
 * one `envelop({ plugins })` instance with our GraphQL-level plugins (the limits and cost, the
 * client errors' validation rule, introspection off, the operation metrics, graphql-jit, masked
 * errors, a parse and validation cache) behind a plain node:http handler that does the HTTP-level
 * work itself: the request id and latency metric, the request limit and the cost charge, the CSRF
 * and nesting checks, the response limit's bound, the JSON answer. POST /graphql with a JSON body
 * only: what the floor request needs, not a server (no GET, batching, persisted documents, REST,
 * health, compression of large bodies, CORS, subscriptions).
 */
export function serveLeverPrototype(
  config: Config,
  port: number,
  host: string,
  /** The database to read (the bench's); absent, a client never connected (the floor reads nothing). */
  database?: Db,
): void {
  const logger = createLogger(config.logLevel);
  const db = database ?? new MongoClient(config.mongo.uri as string).db('floor');
  const metrics = createMetrics({ operationNames: new Set() });
  const resolveViewer = createViewerResolver(config.jwt);
  const { timeoutMs, admission } = config.mongo;
  const laneLimits = { ...admission, maxWaitMs: 1_000, giveUpMs: timeoutMs, slowMs: timeoutMs / 2 };
  const lanes = { lookup: createLane('lookup', laneLimits), scan: createLane('scan', laneLimits) };
  const guard = {
    timeoutMs,
    graceMs: 500,
    laneOf: (method: string) => (LOOKUPS.has(method) ? lanes.lookup : lanes.scan),
    observe: metrics.observeQuery,
  };
  const reading = { maxTimeMS: timeoutMs };
  const contextDeps = {
    products: guardRepository(
      'products',
      createProductRepository(db, { ...reading, totals: createTotalCache() }),
      guard,
    ),
    orders: guardRepository('orders', createOrderRepository(db, reading), guard),
    resolveViewer,
    storeLocale: config.storeLocale,
  };
  const { rateLimit } = config;
  const clientKey = createClientKey({ resolveViewer, trustedProxies: rateLimit.trustedProxies });
  const requests = createClientLimiter({
    name: 'requests',
    pointsPerMinute: rateLimit.requestsPerMinute,
    failOpen: true,
  });
  const cost = createClientLimiter({
    name: 'cost',
    pointsPerMinute: rateLimit.costPerMinute,
    failOpen: true,
  });

  const documents = new Map<string, DocumentNode>();
  const validated = new WeakMap<DocumentNode, readonly Error[]>();
  /** Stands for Yoga's parse and validation cache (bounded there; unbounded here: one document). */
  const cache: EnvelopPlugin = {
    onParse({ params, setParsedDocument }) {
      const known = documents.get(String(params.source));
      if (known) return setParsedDocument(known);
      return ({ result }) => {
        if (result && !(result instanceof Error)) documents.set(String(params.source), result);
      };
    },
    onValidate({ params, setResult }) {
      const known = validated.get(params.documentAST);
      if (known) return setResult(known);
      return ({ result }) => validated.set(params.documentAST, result);
    },
  };
  const getEnveloped = envelop({
    plugins: [
      useEngine({
        parse,
        validate,
        execute: normalizedExecutor,
        subscribe: normalizedExecutor,
        specifiedRules,
      }),
      useSchema(schema),
      useClientErrors({ logger }).plugin as EnvelopPlugin,
      useGraphqlLimits({ hideSuggestions: true, isTrusted: () => false }) as EnvelopPlugin,
      useValidationRule(NoSchemaIntrospectionCustomRule),
      metrics.plugin as EnvelopPlugin,
      useGraphQlJit({}, { enableIf: ({ document }) => isSingleQuery(document) }),
      useMaskedErrors(),
      cache,
    ],
  });

  const answer = (
    res: ServerResponse,
    status: number,
    body: string,
    headers: Record<string, string | number>,
  ) => {
    res.writeHead(status, {
      'content-type': 'application/graphql-response+json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      ...headers,
    });
    res.end(body);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      metrics.observeRequest(req.method ?? 'GET', '/graphql', res.statusCode, seconds);
    });
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const request = {
      headers: {
        get: (name: string) => (req.headers[name] as string | undefined) ?? null,
        has: (name: string) => req.headers[name] !== undefined,
      },
      signal: controller.signal,
    } as unknown as Request;
    const key = await clientKey(request, { req });
    const allowance = await requests.consume(key, 1);
    if (allowance === 'unavailable' || !allowance.allowed) throw new Error('refused');
    const headers = { 'x-request-id': id, ...rateLimitHeaders(allowance) };
    if (!req.headers['content-type']?.startsWith('application/json')) throw new Error('CSRF');
    const params = JSON.parse(String((req as { body?: Buffer }).body)) as {
      query: string;
      operationName?: string;
      variables?: Record<string, unknown>;
    };
    if (
      nestsDeeperThan(params, GRAPHQL_LIMITS.maxParamsDepth + 1) ||
      documentNestsDeeperThan(params.query, GRAPHQL_LIMITS.maxNesting, GRAPHQL_LIMITS.maxTokens)
    )
      throw new Error('nesting');
    const enveloped = getEnveloped({ req, request, params });
    const document = enveloped.parse(params.query);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length) return answer(res, 400, JSON.stringify({ errors }), headers);
    const contextValue = await enveloped.contextFactory(createContext(request, contextDeps));
    const points = Math.ceil(estimateCost(document, params.operationName, params.variables));
    const charged = await cost.consume(key, Math.max(1, points));
    if (charged === 'unavailable' || !charged.allowed) throw new Error('cost');
    const result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      variableValues: params.variables,
      operationName: params.operationName,
      contextValue,
    })) as ExecutionResult & { stringify?: (result: ExecutionResult) => string };
    const body = (result.stringify ?? JSON.stringify)(result);
    if (body.length > config.maxResponseBytes) throw new Error('too large');
    answer(res, 200, body, headers);
  }

  createServer(
    guardRequests(
      (req, res) =>
        void handle(req, res).catch((error: unknown) =>
          answer(res, 500, JSON.stringify({ errors: [{ message: String(error) }] }), {}),
        ),
      { maxBodyBytes: config.maxBodyBytes },
    ),
  ).listen(port, host);
}

/** As src/app.ts: the repository methods that read a few documents by key (the lookup lane). */
const LOOKUPS = new Set(['findByUlid', 'findByIds', 'findByItemIds', 'findByVariantIds']);

function isSingleQuery(document: DocumentNode): boolean {
  const operations = document.definitions.filter(
    (definition) => definition.kind === Kind.OPERATION_DEFINITION,
  );
  return operations.length === 1 && operations[0]?.operation !== OperationTypeNode.SUBSCRIPTION;
}
