import { createHash } from 'node:crypto';

export interface CachedBody {
  body: string;
  etag: string;
  expiresAt: number;
}

export function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/**
 * The finished bytes of public product pages, by request URL, for `ttlMs`: a hit skips execution,
 * serialisation and hashing. Bounded; the oldest entry goes first. A TTL of 0 stores nothing.
 */
export function createPageCache(ttlMs: number, maxEntries = 1_000) {
  const entries = new Map<string, CachedBody>();
  return {
    get(key: string): CachedBody | undefined {
      const entry = entries.get(key);
      if (entry && entry.expiresAt <= Date.now()) {
        entries.delete(key);
        return undefined;
      }
      return entry;
    },
    put(key: string, body: string): CachedBody {
      const entry = { body, etag: etagOf(body), expiresAt: Date.now() + ttlMs };
      if (ttlMs > 0) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entries.set(key, entry);
      }
      return entry;
    },
  };
}

export type PageCache = ReturnType<typeof createPageCache>;
