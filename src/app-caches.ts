import type { AppDependencies } from './app-dependencies';
import { isRestExecution } from './context';
import { cacheScopeOf } from './db/derived/cache-scope';
import { graphqlResponseCachePlugins } from './graphql-response-cache';
import type { Metrics } from './observability/metrics';
import { createPageCache } from './rest/page-cache';
import { createRedisResponseStore, purgeOnChange, responseStores } from './store/response-store';

/**
 * The response caches (GraphQL results and /api/v1's finished pages) over one set of stores (the
 * process's, and Redis's when there is one), and how they follow the products' feed.
 */
export function createCaches(
  { config, redis, productFeed: feed }: AppDependencies,
  metrics: Metrics | undefined,
) {
  const settleMs = config.mongo.timeoutMs + 1_000; // one database deadline: reads begun before a change have ended
  const stores = responseStores(
    redis && createRedisResponseStore(redis, config.responseCacheBudget),
    config.responseCacheBudget,
    settleMs,
    feed?.mode === 'log' ? () => feed.handedOn() : undefined,
  );
  const cacheOn = config.responseCacheTtlMs > 0;
  const { maxAgeSeconds, staleWhileRevalidateSeconds } = config.httpCache;
  const publicCacheControl = `public, max-age=${maxAgeSeconds}, stale-while-revalidate=${staleWhileRevalidateSeconds}`;
  const countCacheLookup = (result: 'hit' | 'miss') => metrics?.cacheLookups.inc({ result });
  const responseCache = cacheOn
    ? graphqlResponseCachePlugins({
        ttlMs: config.responseCacheTtlMs,
        store: stores.create(),
        // /api/v1 keeps its own finished-bytes page cache.
        skip: isRestExecution,
        publicCacheControl,
        answerStoredBytes: config.persistedOperations.mode !== 'trusted-only',
        onLookup: countCacheLookup,
      })
    : undefined;
  const pageCache = cacheOn
    ? createPageCache(stores.create(), config.responseCacheTtlMs, staleWhileRevalidateSeconds * 1000)
    : undefined;
  /** Every instance purges its own caches on the feed's changes (and the shared one: idempotent). */
  const followFeed = () => {
    if (!feed) return;
    // Answers read before a change and stored after its purge are refused; a shared store is purged
    // once more a database deadline later, for the instances whose feeds are behind this one's.
    purgeOnChange(
      (listener) => feed.subscribe((batch) => listener(cacheScopeOf(batch))),
      [...stores.all],
      stores.purges,
      settleMs,
    );
  };
  return { responseCache, pageCache, publicCacheControl, countCacheLookup, followFeed };
}
