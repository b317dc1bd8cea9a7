import { etagOf } from '../http/etag';
import type { ResponseStore } from '../store/response-store';

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
 */
export function createPageCache(store: ResponseStore, ttlMs: number, staleMs = 0) {
  return {
    scope: store.scope,
    async get(key: string): Promise<(CachedBody & { stale: boolean }) | undefined> {
      const stored = await store.get(`rest:${key}`);
      if (stored === undefined) return undefined;
      const newline = stored.indexOf('\n');
      const head = stored.slice(0, newline);
      // `<fresh until, ms> <etag>`; entries of earlier versions hold the ETag alone.
      const space = head.indexOf(' ');
      const freshUntil = space > 0 ? Number(head.slice(0, space)) : Number.POSITIVE_INFINITY;
      return {
        etag: head.slice(space + 1),
        body: stored.slice(newline + 1),
        stale: freshUntil <= Date.now(),
      };
    },
    /** Stores in the background: the answer never waits for the store. */
    put(key: string, body: string, tags: readonly string[]): CachedBody {
      const entry = { body, etag: etagOf(body) };
      const freshUntil = Date.now() + ttlMs;
      void store.set(`rest:${key}`, `${freshUntil} ${entry.etag}\n${body}`, ttlMs + staleMs, tags);
      return entry;
    },
  };
}

export type PageCache = ReturnType<typeof createPageCache>;
