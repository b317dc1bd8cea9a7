import { createBoundedCache } from '../bounded-cache';
import type { SharedRedis } from '../store/redis';
import type { Manifest } from './manifest';

/** Hash → document of automatic persisted queries, shared by the fleet when Redis is there. */
export interface ApqStore {
  get(hash: string): Promise<string | undefined>;
  /** Keeps a registered document; one over the size bound is not kept (it still runs this once). */
  set(hash: string, document: string): Promise<void>;
}

export const APQ_LIMITS = {
  /** Larger documents are not registered (the token limit refuses far smaller ones anyway). */
  maxDocumentBytes: 32 * 1024,
  /** What this process keeps, alone or as the copy that survives a Redis outage. */
  maxLocalBytes: 4 * 1024 * 1024,
  ttlMs: 24 * 60 * 60 * 1000,
} as const;

/**
 * The fixed entries (the manifest, the /api/v1 operations) first, then this process's bounded
 * copy, then Redis. Registrations go to both: a Redis outage costs only the other instances'
 * registrations, and a Redis error never fails the request.
 */
export function createApqStore({ fixed, redis }: { fixed: Manifest; redis?: SharedRedis }): ApqStore {
  const local = createBoundedCache<string>({
    maxBytes: APQ_LIMITS.maxLocalBytes,
    maxEntryBytes: APQ_LIMITS.maxDocumentBytes,
  });
  const redisKey = (hash: string) => `apq:${hash}`;
  return {
    async get(hash) {
      const known = fixed.get(hash) ?? local.get(hash);
      if (known !== undefined || !redis?.isReady()) return known;
      const shared = await redis.client.get(redisKey(hash)).catch(() => null);
      if (shared === null) return undefined;
      local.set(hash, shared, Buffer.byteLength(shared), APQ_LIMITS.ttlMs);
      return shared;
    },
    async set(hash, document) {
      const bytes = Buffer.byteLength(document);
      if (bytes > APQ_LIMITS.maxDocumentBytes || fixed.has(hash)) return;
      local.set(hash, document, bytes, APQ_LIMITS.ttlMs);
      if (!redis?.isReady()) return;
      await redis.client.set(redisKey(hash), document, 'PX', APQ_LIMITS.ttlMs).catch(() => undefined);
    },
  };
}
