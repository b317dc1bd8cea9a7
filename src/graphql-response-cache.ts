import { useResponseCache, type Cache } from '@envelop/response-cache';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { createBoundedCache, type ByteBudget } from './bounded-cache';
import type { AppContext } from './context';

export interface GraphqlResponseCacheOptions {
  ttlMs: number;
  budget: ByteBudget;
  /** Executions that keep their own cache (the /api/v1 pages). */
  skip: (context: unknown) => boolean;
  onLookup: (result: 'hit' | 'miss') => void;
}

/**
 * Whole GraphQL results of public reads, shared by every caller (one key for all: `session` is
 * null), so a result is stored only if nothing in computing it asked who the caller is: an order,
 * or a `node` that turned out to be one (even a null one), never enters.
 */
export function useGraphqlResponseCache({
  ttlMs,
  budget,
  skip,
  onLookup,
}: GraphqlResponseCacheOptions): Plugin {
  return useResponseCache({
    session: () => null,
    enabled: (context) => !skip(context),
    cache: boundedResultCache(budget, onLookup),
    ttl: ttlMs,
    // Type names are schema coordinates too: nothing holding an order is ever stored.
    ttlPerSchemaCoordinate: { Order: 0, OrderItem: 0 },
    onTtl: ({ ttl, context }) => (((context as Partial<AppContext>).viewerConsulted?.() ?? true) ? 0 : ttl),
    includeExtensionMetadata: false,
    // The default also says so on the console for every 401/403/422.
    shouldCacheResult: ({ result }) => !result.errors?.length,
  }) as Plugin;
}

/** This schema has no mutations, so nothing is ever invalidated; entries expire or are evicted. */
function boundedResultCache(budget: ByteBudget, onLookup: (result: 'hit' | 'miss') => void): Cache {
  const results = createBoundedCache<ExecutionResult>(budget);
  return {
    get(key) {
      const result = results.get(key);
      onLookup(result ? 'hit' : 'miss');
      return result;
    },
    set(key, result, _entities, ttl) {
      results.set(key, result, Buffer.byteLength(JSON.stringify(result)), ttl);
    },
    invalidate: () => undefined,
  };
}
