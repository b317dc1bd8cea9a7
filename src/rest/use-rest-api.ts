import { parse, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { AppContext } from '../context';
import type { Endpoint } from './endpoint';
import { matchEndpoint, REST_ENDPOINTS } from './endpoints';
import { conditionalJsonResponse, etagOf } from '../http/etag';
import { productTagsOf, type CachedBody, type PageCache } from './page-cache';
import { canonicalQuery, parseQuery, readQuery } from './query';
import { errorCodeResponse, messageResponse, validationResponse } from './responses';
import { jsonResponse, Response } from '../http/fetch-api';
import type { Edge, ServerContext } from '../http/router';
import { createSingleFlight } from '../single-flight';

export interface RestApiOptions {
  /** Absolute base of pagination links; default: the request's origin. */
  publicBaseUrl?: string;
  /** Finished public product pages (process or shared); none: nothing is cached. */
  pageCache?: PageCache;
  /** `Cache-Control` of public product pages. */
  publicCacheControl?: string;
  /** Told of each page-cache lookup, for metrics. */
  onCacheLookup?: (result: 'hit' | 'miss') => void;
  /** Called with failures that answer 500, for logging. Default: console.error. */
  onUnexpectedError?: (error: unknown, request: Request) => void;
}

const PREFIX = '/api/v1';
/** Orders answer per customer: never stored by a browser or a CDN. */
const PRIVATE = { 'cache-control': 'private, no-store' };
const ALLOWED_METHODS = 'GET, HEAD';

type Yoga = YogaServerInstance<Record<string, unknown>, AppContext>;
/**
 * Runs an operation; with `signal`, its database work is bound to that instead of the request's.
 * Answers the result and what its product reads named (the page's cache tags).
 */
type Run = (
  document: DocumentNode,
  variables: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<{ result: ExecutionResult; readTags: readonly string[] }>;

/** A page's execution, shared by the concurrent misses of its cache key. */
type Rendered =
  | { result: ExecutionResult; entry?: undefined }
  | { entry: CachedBody & { stored: boolean }; result?: undefined };

interface MatchedRequest {
  endpoint: Endpoint;
  params: Record<string, string>;
  /** The request path without its trailing slash. */
  path: string;
  url: URL;
  request: Request;
  run: Run;
}

/** Each endpoint's operation, parsed and validated against the schema once, at start. */
function prepareDocuments(schema: GraphQLSchema): Map<Endpoint, DocumentNode> {
  return new Map(
    REST_ENDPOINTS.map((endpoint) => {
      const document = parse(endpoint.document);
      const [error] = validate(schema, document);
      if (error)
        throw new Error(`The operation of ${endpoint.path} does not match the schema: ${error.message}`);
      return [endpoint, document];
    }),
  );
}

/** Runs an operation on the app's own schema with the request's context, as a REST call. */
function runner(yoga: Yoga, request: Request, serverContext: Record<string, unknown>): Run {
  return async (document, variableValues, signal) => {
    const enveloped = yoga.getEnveloped({
      ...serverContext,
      request: signal ? new Request(request.url, { headers: request.headers, signal }) : request,
      params: {},
      restExecution: true,
    });
    const contextValue = await enveloped.contextFactory();
    const result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      variableValues,
      contextValue,
    })) as ExecutionResult;
    return { result, readTags: (contextValue as unknown as AppContext).readTags() };
  };
}

/** For a result with errors: the first one's status. */
function errorResponse({ errors }: ExecutionResult, cacheable: boolean): Response {
  const error = errors![0]!;
  const http = error.extensions?.http as { headers?: Record<string, string> } | undefined;
  const response = errorCodeResponse(
    error.extensions?.code,
    error.message,
    error.extensions?.errors,
    http?.headers,
  );
  // A masked error (`unexpected`) was logged where it was masked; any other is logged here.
  if (response.status === 500 && error.extensions?.unexpected !== true) throw error;
  if (!cacheable) for (const [name, value] of Object.entries(PRIVATE)) response.headers.set(name, value);
  return response;
}

/**
 * Serves /api/v1 inside Yoga from the endpoint table: each request is validated once by its
 * endpoint's query schema, then runs the endpoint's pre-validated GraphQL operation through
 * `getEnveloped` with the request's own context, so REST shares the schema's data path,
 * authorisation and error codes.
 */
export function useRestApi(options: RestApiOptions = {}): { plugin: Plugin; edge: Edge } {
  const {
    publicBaseUrl,
    pageCache,
    publicCacheControl = 'public, max-age=0',
    onCacheLookup = () => undefined,
    onUnexpectedError = (error) => console.error(error),
  } = options;
  let started: { yoga: Yoga; documents: Map<Endpoint, DocumentNode> } | undefined;
  const pagesInFlight = createSingleFlight<Rendered>();

  /** One matched GET/HEAD: validate once, serve from the page cache or run, then build the body. */
  async function respond({ endpoint, params, path, url, request, run }: MatchedRequest): Promise<Response> {
    const input = parseQuery(endpoint.query, readQuery(url.searchParams));
    if (!input.ok) return validationResponse(input.errors);
    const query = canonicalQuery(input.value as object);
    const cache = endpoint.cacheable ? pageCache : undefined;
    const baseUrl = publicBaseUrl ?? url.origin;
    // What the body depends on, nothing the client can vary without changing the answer.
    const cacheKey = `${baseUrl}${path}?${query}`;
    const lookup = await cache?.get(cacheKey);
    const cached = lookup?.page;
    const fresh = cached && !cached.stale ? cached : undefined;
    if (cache) onCacheLookup(fresh ? 'hit' : 'miss');
    const ifNoneMatch = request.headers.get('if-none-match');
    const headers = endpoint.cacheable
      ? {
          'cache-control': publicCacheControl,
          vary: 'Accept-Encoding',
          ...(cache ? { 'x-cache': fresh ? 'HIT' : 'MISS' } : {}),
        }
      : PRIVATE;
    if (fresh) return conditionalJsonResponse(fresh, ifNoneMatch, headers);

    const document = started!.documents.get(endpoint)!;
    const variables = endpoint.variables(input.value, params);
    if (cache && lookup) {
      // Concurrent misses of one page run it once; the others wait for that run, not the database.
      let ranItself = false;
      const rendered = await pagesInFlight.run(cacheKey, request.signal, async (signal) => {
        ranItself = true;
        const { result, readTags } = await run(document, variables, signal);
        if (result.errors?.length) return { result };
        const body = endpoint.body(result.data as Record<string, unknown>, { query, path, baseUrl });
        const json = JSON.stringify(body);
        const tags = [...productTagsOf(body as Record<string, unknown>), ...readTags];
        return { entry: cache.put(cacheKey, json, tags, lookup.since) };
      });
      // A page not stored was touched by a change purged while it ran: it may predate that change,
      // and a request that joined the run after it must not answer it.
      if (rendered.entry && !rendered.entry.stored && !ranItself) return respondUncached();
      if (rendered.entry) return conditionalJsonResponse(rendered.entry, ifNoneMatch, headers);
      // Another client's budget refused the run this request joined: it runs on its own budget.
      if (!ranItself && rendered.result.errors?.[0]?.extensions?.code === 'RATE_LIMITED')
        return respondUncached();
      const refused = errorResponse(rendered.result, endpoint.cacheable);
      // The refill cannot run now: the page it would replace, while it is young enough.
      if (cached && refused.status === 503)
        return conditionalJsonResponse(cached, ifNoneMatch, { ...headers, 'x-cache': 'STALE' });
      return refused;
    }

    return respondUncached();

    async function respondUncached(): Promise<Response> {
      const { result } = await run(document, variables);
      if (result.errors?.length) return errorResponse(result, endpoint.cacheable);
      const body = endpoint.body(result.data as Record<string, unknown>, { query, path, baseUrl });
      if (!endpoint.cacheable) return jsonResponse(200, body, PRIVATE);
      const json = JSON.stringify(body);
      return conditionalJsonResponse({ body: json, etag: etagOf(json) }, ifNoneMatch, headers);
    }
  }

  const plugin: Plugin = {
    onYogaInit({ yoga }) {
      const instance = yoga as unknown as Yoga;
      started = { yoga: instance, documents: prepareDocuments(instance.getEnveloped().schema) };
    },
  };
  // Only /api/v1 and what is under it reach serve: nothing else pays for it.
  const edge: Edge = { routes: { paths: { [PREFIX]: serve }, prefixes: { [`${PREFIX}/`]: serve } } };
  return { plugin, edge };

  async function serve(request: Request, url: URL, serverContext: ServerContext): Promise<Response> {
    // Laravel's router ignores one trailing slash.
    const path = url.pathname.length > PREFIX.length + 1 ? url.pathname.replace(/\/$/, '') : url.pathname;
    const matched = matchEndpoint(path);
    if (!matched) return messageResponse(404, 'Not Found.');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return messageResponse(
        405,
        `The ${request.method} method is not supported for route ${path.slice(1)}. Supported methods: ${ALLOWED_METHODS}.`,
        { allow: ALLOWED_METHODS },
      );
    }
    let response: Response;
    try {
      const run = runner(started!.yoga, request, serverContext);
      response = await respond({ ...matched, path, url, request, run });
    } catch (error) {
      onUnexpectedError(error, request);
      response = messageResponse(500, 'Server Error.');
    }
    return request.method === 'HEAD' ? new Response(null, response) : response;
  }
}
