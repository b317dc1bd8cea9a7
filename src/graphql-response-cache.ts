import { createHash } from 'node:crypto';
import { useResponseCache, type Cache } from '@envelop/response-cache';
import type { ExecutionResult } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { AppContext } from './context';
import { ifNoneMatchMatches } from './http/headers';
import { etagOf } from './rest/page-cache';
import { decodeGlobalId } from './schema/global-id';
import type { ResponseStore } from './store/response-store';

export interface GraphqlResponseCacheOptions {
  ttlMs: number;
  store: ResponseStore;
  /** Executions that keep their own cache (the /api/v1 pages). */
  skip: (context: unknown) => boolean;
  onLookup: (result: 'hit' | 'miss') => void;
}

/**
 * Whole GraphQL results of public reads, shared by every caller (one key for all: `session` is
 * null), so a result is stored only if nothing in computing it asked who the caller is: an order,
 * or a `node` that turned out to be one (even a null one), never enters. Each result carries
 * `extensions.responseCache` for src/http/use-http-caching.ts, which turns it into headers.
 */
export function useGraphqlResponseCache({
  ttlMs,
  store,
  skip,
  onLookup,
}: GraphqlResponseCacheOptions): Plugin {
  return useResponseCache({
    session: () => null,
    // The request's own text, so useStoredResultBytes finds an entry before anything is parsed.
    buildResponseCacheKey: ({ documentString, operationName, variableValues, context }) =>
      resultKeyOf(
        (context as { params?: GraphQLParams }).params ?? {
          query: documentString,
          operationName: operationName ?? undefined,
          variables: variableValues ?? undefined,
        },
      ),
    enabled: (context) => !skip(context),
    cache: storedResultCache(store, onLookup),
    ttl: ttlMs,
    // Type names are schema coordinates too: nothing holding an order is ever stored.
    ttlPerSchemaCoordinate: { Order: 0, OrderItem: 0 },
    onTtl: ({ ttl, context }) => (((context as Partial<AppContext>).viewerConsulted?.() ?? true) ? 0 : ttl),
    includeExtensionMetadata: true,
    // The default also says so on the console for every 401/403/422.
    shouldCacheResult: ({ result }) => !result.errors?.length,
  }) as Plugin;
}

/** "product:7" for a Product entity, "variant:3" for a Variant: the tags a purge names. */
function tagOf(entity: { typename: string; id?: string | number }): string[] {
  if (entity.id === undefined) return [];
  try {
    const { typename, id } = decodeGlobalId(String(entity.id));
    return [`${typename.toLowerCase()}:${id}`];
  } catch {
    return [];
  }
}

/** This schema has no mutations: entries expire, or a purge (scripts/cache-purge.ts) drops them. */
function storedResultCache(store: ResponseStore, onLookup: (result: 'hit' | 'miss') => void): Cache {
  return {
    async get(key) {
      const stored = await store.get(key);
      onLookup(stored ? 'hit' : 'miss');
      return stored ? (JSON.parse(stored) as ExecutionResult) : undefined;
    },
    set(key, result, entities, ttl) {
      const tags = [...new Set([...entities].flatMap(tagOf))];
      void store.set(key, JSON.stringify(result), ttl, tags);
    },
    invalidate: () => undefined,
  };
}

/** The store key of a request's result: its document text, operation name and variables as sent. */
function resultKeyOf({ query, operationName, variables }: GraphQLParams): string {
  const text = `${query ?? ''}|${operationName ?? ''}|${JSON.stringify(variables ?? {})}`;
  return `gql:${createHash('sha256').update(text).digest('base64url')}`;
}

export interface StoredResultBytesOptions {
  store: ResponseStore;
  publicCacheControl: string;
  onHit: () => void;
}

/** Only plain JSON clients: another media type (or APQ's extensions) takes the normal path. */
function plainJsonRequest(request: Request, params: GraphQLParams): boolean {
  if (!params.query || params.extensions !== undefined) return false;
  const accept = request.headers.get('accept');
  return accept === null || /^\s*(\*\/\*|application\/json)\s*(;[^,]*)?$/i.test(accept);
}

/**
 * A stored result answers as the stored bytes, before Yoga parses, validates, builds a context,
 * executes or serialises anything: the shared response cache held the finished JSON all along.
 * Only stored (public, error-free) results exist, and only for documents that passed every limit
 * when they ran. The request limit still counts the request (onRequest runs first); the cost budget
 * is not charged for a hit, which costs the server nothing of what the budget meters.
 */
export function useStoredResultBytes({ store, publicCacheControl, onHit }: StoredResultBytesOptions): Plugin {
  // The stand-in result of a hit. Serialised by anyone else (a batch), it is the stored result.
  const hits = new WeakMap<object, string>();
  return {
    onParams({ params, request, setResult }) {
      if (!plainJsonRequest(request, params)) return;
      return store.get(resultKeyOf(params)).then((stored) => {
        if (stored === undefined) return;
        onHit();
        const hit = { toJSON: () => JSON.parse(stored) as unknown };
        hits.set(hit, stored);
        setResult(hit as ExecutionResult);
      });
    },
    onResultProcess({ request, result, setResultProcessor }) {
      const stored = !Array.isArray(result) && hits.get(result as object);
      if (!stored) return;
      setResultProcessor((_result, fetchAPI) => {
        const headers: Record<string, string> = {
          'content-type': 'application/json; charset=utf-8',
          'x-cache': 'HIT',
          'cache-control': publicCacheControl,
          vary: 'Accept, Accept-Encoding',
        };
        if (request.method !== 'GET') return new fetchAPI.Response(stored, { headers });
        const etag = etagOf(stored);
        return ifNoneMatchMatches(request.headers.get('if-none-match'), etag)
          ? new fetchAPI.Response(null, { status: 304, headers: { ...headers, etag } })
          : new fetchAPI.Response(stored, { headers: { ...headers, etag } });
      }, 'application/json');
    },
  };
}
