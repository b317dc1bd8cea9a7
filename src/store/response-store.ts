import { createHash } from 'node:crypto';
import { createBoundedCache, type ByteBudget } from '../bounded-cache';
import type { CacheScope } from '../db/derived/cache-scope';
import { FILTER_TAG_PREFIXES } from '../db/catalog/read-tags';
import type { SharedRedis } from './redis';

/**
 * Finished, public responses by key, with the entities each holds as tags ("product:7"), so that
 * one product change can drop every page that shows it. Never throws: a store that fails is a miss.
 */
export interface ResponseStore {
  /** "shared" when every instance sees the same entries. */
  readonly scope: 'process' | 'shared';
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number, tags: readonly string[]): Promise<void>;
  /** Drops every entry (the data changed under them). */
  purge(): Promise<void>;
  /** Drops the entries tagged with any of `tags` (a product changed, but no list it is in). */
  purgeTags(tags: readonly string[]): Promise<void>;
  /** The tags naming a filter (src/db/catalog/read-tags.ts) that live entries may carry. */
  filterTags(): Promise<string[]>;
}

const isFilterTag = (tag: string) => FILTER_TAG_PREFIXES.some((prefix) => tag.startsWith(prefix));

/** Most (entry, tag) pairs a process store remembers; past it, it forgets them all and its entries. */
const MAX_TAGGED = 200_000;

/** One process's entries, bounded in bytes, with which entries each tag names. */
export function createProcessResponseStore(budget: ByteBudget): ResponseStore {
  const entries = createBoundedCache<string>(budget);
  // Keys of entries evicted since stay listed until their tag is purged: deleting them is a no-op.
  let tagged = new Map<string, Set<string>>();
  let pairs = 0;
  const clear = () => {
    entries.clear();
    tagged = new Map();
    pairs = 0;
  };
  return {
    scope: 'process',
    get: async (key) => entries.get(key),
    async set(key, value, ttlMs, tags) {
      if (!entries.set(key, value, Buffer.byteLength(value), ttlMs)) return;
      if (pairs + tags.length > MAX_TAGGED) clear();
      for (const tag of tags) {
        const keys = tagged.get(tag) ?? new Set<string>();
        tagged.set(tag, keys.add(key));
        pairs++;
      }
    },
    async purge() {
      clear();
    },
    async purgeTags(tags) {
      for (const tag of tags) {
        for (const key of tagged.get(tag) ?? []) entries.delete(key);
        pairs -= tagged.get(tag)?.size ?? 0;
        tagged.delete(tag);
      }
    },
    async filterTags() {
      // Each change weighs every filter tag listed: a tag whose entries are all gone goes now, so
      // clients inventing filters (a search per unique term) leave only what is still cached.
      const live: string[] = [];
      for (const [tag, keys] of tagged) {
        if (!isFilterTag(tag)) continue;
        for (const key of keys) {
          if (entries.has(key)) continue;
          keys.delete(key);
          pairs--;
        }
        if (keys.size > 0) live.push(tag);
        else tagged.delete(tag);
      }
      return live;
    },
  };
}

/**
 * Reads only once the feed has handed on every write committed before the read (then every entry
 * from before such a write has been purged); a feed that cannot say in time means a miss.
 */
export function readAfterFeed(store: ResponseStore, handedOn: () => Promise<boolean>): ResponseStore {
  return { ...store, get: async (key) => ((await handedOn()) ? store.get(key) : undefined) };
}

/**
 * The stores of an app's caches: one per cache in the process (each with its own byte budget), or
 * the one `shared` (Redis); `all` to purge. With `handedOn`, reads wait for the feed (readAfterFeed).
 */
export function responseStores(
  shared: ResponseStore | undefined,
  budget: ByteBudget,
  handedOn?: () => Promise<boolean>,
) {
  const all = new Set<ResponseStore>();
  return {
    all,
    create(): ResponseStore {
      const store = shared ?? createProcessResponseStore(budget);
      all.add(store);
      return handedOn ? readAfterFeed(store, handedOn) : store;
    },
  };
}

/** Every key this server writes starts with this, so a purge of "everything" touches nothing else. */
export const KEY_PREFIX = 'storefront:cache:';
const entryKey = (key: string) =>
  `${KEY_PREFIX}entry:${createHash('sha256').update(key).digest('base64url')}`;
/** A tag's index: a sorted set of entry keys scored by when they expire. */
export const tagKey = (tag: string) => `${KEY_PREFIX}tags:${tag}`;
/** The filter tags in use: a sorted set of tags scored by when their newest entry expires. */
export const FILTER_TAGS_KEY = `${KEY_PREFIX}filter-tags`;
/** The plain sets earlier versions wrote (members never left them); purged, no longer written. */
const legacyTagKey = (tag: string) => `${KEY_PREFIX}tag:${tag}`;

/**
 * Entries in Redis, shared by the fleet: `SET … PX ttl`, and per tag a sorted set of the entry keys
 * that hold it, scored by their expiry. Each write drops the tag's expired members, so a tag holds
 * about its live entries however many distinct keys clients invent (`?utm=<unique>` was a member
 * each, kept as long as anyone wrote the tag). Entries over `maxEntryBytes` are not stored; the
 * total is bounded by the TTL and Redis's own `maxmemory`.
 */
export function createRedisResponseStore(redis: SharedRedis, { maxEntryBytes }: ByteBudget): ResponseStore {
  const { client } = redis;
  return {
    scope: 'shared',
    async get(key) {
      if (!redis.isReady()) return undefined;
      try {
        return (await client.get(entryKey(key))) ?? undefined;
      } catch {
        return undefined;
      }
    },
    async set(key, value, ttlMs, tags) {
      if (!redis.isReady() || ttlMs <= 0 || Buffer.byteLength(value) > maxEntryBytes) return;
      const stored = entryKey(key);
      const now = Date.now();
      const write = client.multi().set(stored, value, 'PX', ttlMs);
      // Every entry has the same TTL, so the newest entry of a tag expires last: the tag with it.
      for (const tag of tags) {
        write
          .zremrangebyscore(tagKey(tag), '-inf', now)
          .zadd(tagKey(tag), now + ttlMs, stored)
          .pexpire(tagKey(tag), ttlMs);
        if (isFilterTag(tag))
          write
            .zremrangebyscore(FILTER_TAGS_KEY, '-inf', now)
            .zadd(FILTER_TAGS_KEY, now + ttlMs, tag)
            .pexpire(FILTER_TAGS_KEY, ttlMs);
      }
      await write.exec().catch(() => undefined);
    },
    async purge() {
      if (redis.isReady()) await purgeAll(redis).catch(() => undefined);
    },
    async purgeTags(tags) {
      if (redis.isReady()) await purgeTags(redis, tags).catch(() => undefined);
    },
    async filterTags() {
      if (!redis.isReady()) return [];
      return client.zrangebyscore(FILTER_TAGS_KEY, Date.now(), '+inf').catch(() => []);
    },
  };
}

/** Drops every entry tagged with any of `tags`; returns how many entries went. */
export async function purgeTags(redis: SharedRedis, tags: readonly string[]): Promise<number> {
  let purged = 0;
  for (const tag of tags) {
    const entries = await redis.client.zrange(tagKey(tag), 0, -1);
    const legacy = await redis.client.smembers(legacyTagKey(tag)).catch(() => []);
    const all = [...new Set([...entries, ...legacy])];
    if (all.length > 0) purged += await redis.client.del(...all);
    await redis.client.del(tagKey(tag), legacyTagKey(tag));
  }
  return purged;
}

/** Drops every entry and tag this server wrote (SCAN, never KEYS: Redis stays responsive). */
export async function purgeAll(redis: SharedRedis): Promise<number> {
  let purged = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.client.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) purged += await redis.client.unlink(...keys);
  } while (cursor !== '0');
  return purged;
}

/**
 * Purges `stores` when the feed reports a change, and once more `settleMs` later: a request that
 * read the old data before the change and stored its answer after the first purge is dropped by
 * the second (one slower than that is bounded by the entries' lifetime). A change whose reach is
 * unknown (`'all'`: no document before it) drops every entry; any other drops the entries tagged
 * with what it names, and those of each filter it `touches` (src/db/derived/cache-scope.ts).
 */
export function purgeOnChange(
  subscribe: (listener: (scope: CacheScope) => Promise<void>) => () => void,
  stores: readonly ResponseStore[],
  settleMs: number,
): () => void {
  const purgeOne = async (store: ResponseStore, scope: CacheScope) => {
    if (scope === 'all') return store.purge();
    const filters = (await store.filterTags()).filter((tag) => scope.touches(tag));
    return store.purgeTags([...scope.tags, ...filters]);
  };
  const purge = (scope: CacheScope) => Promise.all(stores.map((store) => purgeOne(store, scope)));
  const timers = new Set<NodeJS.Timeout>();
  // The feed waits for the first purge: a request it then lets read the cache finds no entry from before.
  const unsubscribe = subscribe((scope: CacheScope) => {
    const again = setTimeout(() => {
      timers.delete(again);
      void purge(scope);
    }, settleMs);
    again.unref();
    timers.add(again);
    return purge(scope).then(() => undefined);
  });
  return () => {
    for (const timer of timers) clearTimeout(timer);
    unsubscribe();
  };
}
