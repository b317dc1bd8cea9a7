import { createHash } from 'node:crypto';
import { createBoundedCache, type ByteBudget } from '../bounded-cache';

export interface CachedBody {
  body: string;
  etag: string;
}

export function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/**
 * The finished bytes of public product pages, by request URL, for `ttlMs`: a hit skips execution,
 * serialisation and hashing. Bounded in bytes (see ByteBudget). A TTL of 0 stores nothing.
 */
export function createPageCache(ttlMs: number, budget: ByteBudget) {
  const entries = createBoundedCache<CachedBody>(budget);
  return {
    get: (key: string): CachedBody | undefined => entries.get(key),
    put(key: string, body: string): CachedBody {
      const entry = { body, etag: etagOf(body) };
      entries.set(key, entry, Buffer.byteLength(body), ttlMs);
      return entry;
    },
  };
}

export type PageCache = ReturnType<typeof createPageCache>;
