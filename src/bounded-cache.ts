export interface ByteBudget {
  /** Bytes all entries may hold together; the least recently used go first. */
  maxBytes: number;
  /** Bytes one entry may hold; a larger value is not stored at all. */
  maxEntryBytes: number;
}

interface Entry<V> {
  value: V;
  bytes: number;
  expiresAt: number;
}

/**
 * A TTL cache bounded in bytes, not entries: a thousand 3 MB results were 3 GB. The caller says
 * what an entry weighs (the length of its JSON), so the bound holds whatever the value is.
 */
export function createBoundedCache<V>({ maxBytes, maxEntryBytes }: ByteBudget) {
  const entries = new Map<string, Entry<V>>();
  let totalBytes = 0;
  // The most recently used key: asked for again (one client's token, request after request), it
  // stays where it is instead of being taken out of the Map and put back.
  let newest: string | undefined;

  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    totalBytes -= entry.bytes;
    if (key === newest) newest = undefined;
  };

  return {
    get(key: string): V | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        remove(key);
        return undefined;
      }
      if (key !== newest) {
        // Re-inserted: Map order is recency order.
        entries.delete(key);
        entries.set(key, entry);
        newest = key;
      }
      return entry.value;
    },
    /** Whether a live entry is kept under `key` (its recency unchanged). */
    has(key: string): boolean {
      const entry = entries.get(key);
      return entry !== undefined && entry.expiresAt > Date.now();
    },
    /** Stores the value unless it is over the per-entry budget or the TTL is 0; says which. */
    set(key: string, value: V, bytes: number, ttlMs: number): boolean {
      remove(key);
      if (ttlMs <= 0 || bytes > maxEntryBytes || bytes > maxBytes) return false;
      for (const oldest of entries.keys()) {
        if (totalBytes + bytes <= maxBytes) break;
        remove(oldest);
      }
      entries.set(key, { value, bytes, expiresAt: Date.now() + ttlMs });
      totalBytes += bytes;
      newest = key;
      return true;
    },
    delete: remove,
    clear(): void {
      entries.clear();
      totalBytes = 0;
      newest = undefined;
    },
    get bytes(): number {
      return totalBytes;
    },
    get size(): number {
      return entries.size;
    },
  };
}

export type BoundedCache<V> = ReturnType<typeof createBoundedCache<V>>;
