import { createBoundedCache } from '../bounded-cache';
import { createClientLimiter } from '../limits/limiter';
import type { SharedRedis } from '../store/redis';
import type { Manifest } from './manifest';

/** Hash → document of automatic persisted queries, shared by the fleet when Redis is there. */
export interface ApqStore {
  get(hash: string): Promise<string | undefined>;
  /**
   * Keeps a document `client` registered, unless it is over the size bound or the client (or the
   * fleet) has registered its share this minute: then it is not kept (it still runs this once).
   */
  set(hash: string, document: string, client: string): Promise<void>;
}

/**
 * What a client can make the fleet keep. Redis holds at most registrationsPerMinute × the TTL in
 * minutes × maxDocumentBytes (60 × 16 KiB ≈ 1 MB a minute, ~58 MB in all), whoever sends them.
 */
export const APQ_LIMITS = {
  /** Larger documents are not registered; comments and whitespace count (2,000 tokens fit well). */
  maxDocumentBytes: 16 * 1024,
  /** What this process keeps, alone or as the copy that survives a Redis outage. */
  maxLocalBytes: 4 * 1024 * 1024,
  /** A client's documents come back after expiry (PersistedQueryNotFound, then the document again). */
  ttlMs: 60 * 60 * 1000,
  registrationsPerClientPerMinute: 10,
  /** The whole fleet's (one process's without Redis). */
  registrationsPerMinute: 60,
} as const;

const FLEET = 'fleet';

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
  // Counted in Redis with the fleet's other limits; per process while it is down.
  const perClient = createClientLimiter({
    name: 'apq-client',
    pointsPerMinute: APQ_LIMITS.registrationsPerClientPerMinute,
    redis,
    failOpen: true,
  });
  const perFleet = createClientLimiter({
    name: 'apq',
    pointsPerMinute: APQ_LIMITS.registrationsPerMinute,
    redis,
    failOpen: true,
  });
  const allowed = async (client: string) => {
    const own = await perClient.consume(client, 1);
    if (own === 'unavailable' || !own.allowed) return false;
    const fleet = await perFleet.consume(FLEET, 1);
    return fleet !== 'unavailable' && fleet.allowed;
  };
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
    async set(hash, document, client) {
      const bytes = Buffer.byteLength(document);
      if (bytes > APQ_LIMITS.maxDocumentBytes || fixed.has(hash) || local.get(hash) !== undefined) return;
      if (!(await allowed(client))) return;
      local.set(hash, document, bytes, APQ_LIMITS.ttlMs);
      if (!redis?.isReady()) return;
      await redis.client.set(redisKey(hash), document, 'PX', APQ_LIMITS.ttlMs).catch(() => undefined);
    },
  };
}
