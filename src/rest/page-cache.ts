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
 */
export function createPageCache(store: ResponseStore, ttlMs: number) {
  return {
    scope: store.scope,
    async get(key: string): Promise<CachedBody | undefined> {
      const stored = await store.get(`rest:${key}`);
      if (stored === undefined) return undefined;
      const newline = stored.indexOf('\n');
      return { etag: stored.slice(0, newline), body: stored.slice(newline + 1) };
    },
    /** Stores in the background: the answer never waits for the store. */
    put(key: string, body: string, tags: readonly string[]): CachedBody {
      const entry = { body, etag: etagOf(body) };
      void store.set(`rest:${key}`, `${entry.etag}\n${body}`, ttlMs, tags);
      return entry;
    },
  };
}

export type PageCache = ReturnType<typeof createPageCache>;
