import { etagOf } from '../http/etag';
import type { CacheStore } from '../store/response-store';

export interface CachedBody {
  body: string;
  etag: string;
}

/** "product:7" for every product a page body lists: a purge of product 7 drops the page. */
export function productTagsOf(body: Record<string, unknown>): string[] {
  const items = Array.isArray(body.data) ? (body.data as { id?: unknown }[]) : [];
  return items.flatMap((item) => (typeof item.id === 'number' ? [`product:${item.id}`] : []));
}

/**
 * The finished bytes of public product pages, by the page's public address (the base its links
 * use, so every instance behind one PUBLIC_BASE_URL shares an entry), for `ttlMs`: a hit skips
 * execution, serialisation and hashing. The ETag is stored with the body.
 *
 * An entry is kept `staleMs` longer than it is fresh: past `ttlMs` it is refilled, and while the
 * refill cannot run (the database lane is full or the database is down) the stale page is served
 * instead of a 503, at most `ttlMs` + `staleMs` old. Without it a hot page under a scan attack
 * expired and was never stored again: 48 of 50 requests for it answered 503.
 *
 * A lookup answers the purge sequence (`since`) with the page, taken before the page is run: a
 * page is stored only if no change its tags can show was purged since (CacheStore).
 */
export function createPageCache(store: CacheStore, ttlMs: number, staleMs = 0) {
  return {
    scope: store.scope,
    async get(key: string): Promise<{ page?: CachedBody & { stale: boolean }; since: number }> {
      const stored = await store.get(`rest:${key}`);
      const since = store.since();
      if (stored === undefined) return { since };
      const newline = stored.indexOf('\n');
      const head = stored.slice(0, newline);
      // `<fresh until, ms> <etag>`; entries of earlier versions hold the ETag alone.
      const space = head.indexOf(' ');
      const freshUntil = space > 0 ? Number(head.slice(0, space)) : Number.POSITIVE_INFINITY;
      const page = {
        etag: head.slice(space + 1),
        body: stored.slice(newline + 1),
        stale: freshUntil <= Date.now(),
      };
      return { page, since };
    },
    /**
     * Stores in the background (the answer never waits for the store) unless a purge since `since`
     * touched `tags`: then `stored` is false, and the page is only its own request's answer.
     */
    put(key: string, body: string, tags: readonly string[], since: number): CachedBody & { stored: boolean } {
      const entry = { body, etag: etagOf(body) };
      const freshUntil = Date.now() + ttlMs;
      const value = `${freshUntil} ${entry.etag}\n${body}`;
      return { ...entry, stored: store.set(`rest:${key}`, value, ttlMs + staleMs, tags, since) };
    },
  };
}

export type PageCache = ReturnType<typeof createPageCache>;
