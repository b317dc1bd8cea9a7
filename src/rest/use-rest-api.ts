import type { DocumentNode, ExecutionResult } from 'graphql';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { ByteBudget } from '../bounded-cache';
import { pageNumbers, type PageNumbers } from '../catalog/product-query';
import { prepareRestOperations, type RestOperations } from './operations';
import { createPageCache } from './page-cache';
import { pageEnvelope } from './pagination';
import { parseProductList, parseProductSearch, type Parsed } from './query-input';
import {
  conditionalJsonResponse,
  errorCodeResponse,
  jsonResponse,
  messageResponse,
  validationResponse,
} from './responses';

export interface RestApiOptions {
  /** Absolute base of pagination links; default: the request's origin. */
  publicBaseUrl?: string;
  /** How long finished product pages are served from memory; 0 (default) turns that off. */
  pageCacheTtlMs?: number;
  /** Bytes the page cache may hold, in all and per page. */
  pageCacheBudget?: ByteBudget;
  /** Told of each page-cache lookup, for metrics. */
  onCacheLookup?: (result: 'hit' | 'miss') => void;
  /** Called with failures that answer 500, for logging. Default: console.error. */
  onUnexpectedError?: (error: unknown, request: Request) => void;
}

const PREFIX = '/api/v1';

/** Marks the context of an /api/v1 execution (its product pages are cached as finished bytes). */
export const REST_EXECUTION = 'restExecution';

export function isRestExecution(context: unknown): boolean {
  return (context as Record<string, unknown> | null)?.[REST_EXECUTION] === true;
}
const ALLOWED_METHODS = 'GET, HEAD';

type Execute = (document: DocumentNode, variables: Record<string, unknown>) => Promise<ExecutionResult>;

interface Route {
  match(path: string): Record<string, string> | null;
  /** `path` is the matched route path (without a trailing slash). */
  handle(
    params: Record<string, string>,
    url: URL,
    execute: Execute,
    path: string,
    request: Request,
  ): Promise<Response>;
}

interface PageData extends PageNumbers {
  items: unknown[];
}

/**
 * Serves /api/v1 inside Yoga: each route runs a pre-validated GraphQL operation with the request's
 * own context, so REST shares the schema's data path, authorisation and error codes.
 */
export function useRestApi(options: RestApiOptions = {}): Plugin {
  const {
    publicBaseUrl,
    pageCacheTtlMs = 0,
    pageCacheBudget = { maxBytes: 32 * 1024 * 1024, maxEntryBytes: 1024 * 1024 },
    onCacheLookup = () => undefined,
    onUnexpectedError = (error) => console.error(error),
  } = options;
  const pageCache = createPageCache(pageCacheTtlMs, pageCacheBudget);
  let yoga: YogaServerInstance<Record<string, unknown>, Record<string, unknown>> | undefined;
  let operations: RestOperations | undefined;

  const firstError = (result: ExecutionResult): Response | null => {
    const [error] = result.errors ?? [];
    if (!error) return null;
    const response = errorCodeResponse(error.extensions?.code, error.message, error.extensions?.errors);
    if (response.status === 500) throw error;
    return response;
  };

  const pageResponse = async (
    execute: Execute,
    document: DocumentNode,
    input: Parsed<object>,
    url: URL,
    path: string,
    ifNoneMatch: string | null,
  ) => {
    if (!input.ok) return validationResponse(input.errors);
    if (pageCacheTtlMs > 0) {
      const cached = pageCache.get(url.href);
      onCacheLookup(cached ? 'hit' : 'miss');
      if (cached) return conditionalJsonResponse(cached, ifNoneMatch);
    }
    const result = await execute(document, input.value as Record<string, unknown>);
    const failure = firstError(result);
    if (failure) return failure;
    const page = (result.data as { page: PageData }).page;
    const numbers = pageNumbers(page.currentPage, page.perPage, page.total, page.items.length);
    const body = JSON.stringify(
      pageEnvelope(page.items, numbers, publicBaseUrl ?? url.origin, path, url.searchParams),
    );
    return conditionalJsonResponse(pageCache.put(url.href, body), ifNoneMatch);
  };

  const productRoute = (
    routePath: string,
    operation: 'productList' | 'productSearch',
    parse: (query: URLSearchParams) => Parsed<object>,
  ): Route => ({
    match: (path) => (path === routePath ? {} : null),
    handle: (_params, url, execute, path, request) =>
      pageResponse(
        execute,
        operations![operation],
        parse(url.searchParams),
        url,
        path,
        request.headers.get('if-none-match'),
      ),
  });

  const routes: Route[] = [
    productRoute(`${PREFIX}/products`, 'productList', parseProductList),
    productRoute(`${PREFIX}/products/search`, 'productSearch', parseProductSearch),
    {
      match: (path) => {
        const match = /^\/api\/v1\/orders\/([^/]+)$/.exec(path);
        return match ? { order: match[1] as string } : null;
      },
      handle: async (params, _url, execute) => {
        const result = await execute(operations!.order, { ulid: safeDecode(params.order ?? '') });
        const failure = firstError(result);
        if (failure) return failure;
        const order = (result.data as { order: Record<string, unknown> }).order;
        return jsonResponse(200, {
          ...order,
          fulfillment_status: String(order.fulfillment_status).toLowerCase(),
          payment_status: String(order.payment_status).toLowerCase(),
        });
      },
    },
  ];

  return {
    onYogaInit({ yoga: instance }) {
      yoga = instance as typeof yoga;
      operations = prepareRestOperations(instance.getEnveloped().schema);
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      if (url.pathname !== PREFIX && !url.pathname.startsWith(`${PREFIX}/`)) return;
      // Laravel's router ignores one trailing slash.
      const path = url.pathname.length > PREFIX.length + 1 ? url.pathname.replace(/\/$/, '') : url.pathname;
      const matched = routes
        .map((route) => ({ route, params: route.match(path) }))
        .find((candidate) => candidate.params !== null);
      if (!matched) return endResponse(messageResponse(404, 'Not Found.'));
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return endResponse(
          messageResponse(
            405,
            `The ${request.method} method is not supported for route ${path.slice(1)}. Supported methods: ${ALLOWED_METHODS}.`,
            { allow: ALLOWED_METHODS },
          ),
        );
      }
      const execute: Execute = async (document, variableValues) => {
        const enveloped = yoga!.getEnveloped({
          ...serverContext,
          request,
          params: {},
          [REST_EXECUTION]: true,
        });
        const contextValue = await enveloped.contextFactory();
        return (await enveloped.execute({
          schema: enveloped.schema,
          document,
          variableValues,
          contextValue,
        })) as ExecutionResult;
      };
      let response: Response;
      try {
        response = await matched.route.handle(matched.params ?? {}, url, execute, path, request);
      } catch (error) {
        onUnexpectedError(error, request);
        response = messageResponse(500, 'Server Error.');
      }
      endResponse(request.method === 'HEAD' ? new Response(null, response) : response);
    },
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
