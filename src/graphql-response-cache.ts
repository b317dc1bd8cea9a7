import { useResponseCache, type Cache } from '@envelop/response-cache';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { AppContext } from './context';
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
      const stored = await store.get(`gql:${key}`);
      onLookup(stored ? 'hit' : 'miss');
      return stored ? (JSON.parse(stored) as ExecutionResult) : undefined;
    },
    set(key, result, entities, ttl) {
      const tags = [...new Set([...entities].flatMap(tagOf))];
      void store.set(`gql:${key}`, JSON.stringify(result), ttl, tags);
    },
    invalidate: () => undefined,
  };
}
