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
 * What the app's caches write through: a store, and the purge log of every change purged from it.
 * A request takes `since` before its first database read, and its answer is stored only if no purge
 * since then could have altered it: a change that lands while the request reads (its answer may
 * predate it) and is purged before the answer is stored would otherwise leave that answer behind.
 */
export interface CacheStore {
  readonly scope: ResponseStore['scope'];
  get(key: string): Promise<string | undefined>;
  /** The purge sequence now: taken after the cache lookup, before the request reads the database. */
  since(): number;
  /**
   * Stores in the background unless a purge after `since` touched `tags`; answers whether it
   * stores (a refused answer is still the right answer for its own request, not for a later one).
   */
  set(key: string, value: string, ttlMs: number, tags: readonly string[], since: number): boolean;
}

type KeptScope = 'all' | { tags: ReadonlySet<string>; touches(filterTag: string): boolean };

/** Whether a purge of `scope` drops an entry tagged `tags`: as purgeOnChange decides. */
function reaches(scope: KeptScope, tags: readonly string[]): boolean {
  if (scope === 'all') return true;
  return tags.some((tag) => scope.tags.has(tag) || (isFilterTag(tag) && scope.touches(tag)));
}

/** Most purges a log remembers; past it (or `keepMs`), the oldest is forgotten. */
const PURGES_KEPT = 1_000;

/**
 * The purges of an app's caches, in order: a sequence bumped by each, and each one's scope (the
 * tags it named, and which filters it touches) for `keepMs`. A filter is kept as the change's
 * predicate, not as the tags purged: a filter first read by a request still running had no entry
 * to purge, and its answer may still miss the change. A request that began before a purge it no
 * longer remembers is treated as touched (not stored).
 */
export function createPurgeLog(keepMs: number, limit = PURGES_KEPT) {
  let sequence = 0;
  let forgotten = 0;
  const kept: { sequence: number; at: number; scope: KeptScope }[] = [];
  const forget = () => {
    const now = Date.now();
    while (kept.length > limit || (kept.length > 0 && now - kept[0]!.at > keepMs))
      forgotten = kept.shift()!.sequence;
  };
  return {
    now(): number {
      forget();
      return sequence;
    },
    /** A change about to be purged: recorded before any entry goes. */
    record(scope: CacheScope): void {
      kept.push({
        sequence: ++sequence,
        at: Date.now(),
        scope: scope === 'all' ? 'all' : { tags: new Set(scope.tags), touches: scope.touches },
      });
      forget();
    },
    /** Whether a purge after `since` reaches an entry tagged `tags`. */
    touchedSince(since: number, tags: readonly string[]): boolean {
      forget();
      if (since < forgotten) return true;
      for (let i = kept.length - 1; i >= 0 && kept[i]!.sequence > since; i--)
        if (reaches(kept[i]!.scope, tags)) return true;
      return false;
    },
  };
}

export type PurgeLog = ReturnType<typeof createPurgeLog>;

/**
 * The stores of an app's caches: one per cache in the process (each with its own byte budget), or
 * the one `shared` (Redis); `all` to purge, `purges` their log (purgeOnChange records in it). With
 * `handedOn`, reads wait for the feed: only once it has handed on every write committed before the
 * read (then every entry from before such a write has been purged); a feed that cannot say in time
 * means a miss.
 */
export function responseStores(
  shared: ResponseStore | undefined,
  budget: ByteBudget,
  keepPurgesMs: number,
  handedOn?: () => Promise<boolean>,
) {
  const all = new Set<ResponseStore>();
  const purges = createPurgeLog(keepPurgesMs);
  return {
    all,
    purges,
    create(): CacheStore {
      const store = shared ?? createProcessResponseStore(budget);
      all.add(store);
      return {
        scope: store.scope,
        get: handedOn ? async (key) => ((await handedOn()) ? store.get(key) : undefined) : store.get,
        since: purges.now,
        set(key, value, ttlMs, tags, since) {
          if (purges.touchedSince(since, tags)) return false;
          void store.set(key, value, ttlMs, tags);
          return true;
        },
      };
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
 * Purges `stores` when the feed reports a change, after recording it in `purges`: an answer whose
 * reads began before the change and that is stored after this is refused (CacheStore), so one purge
 * is enough for a store only this process writes. A change whose reach is unknown (`'all'`: no
 * document before it) drops every entry; any other drops the entries tagged with what it names,
 * and those of each filter it `touches` (src/db/derived/cache-scope.ts).
 *
 * A shared store (Redis) is purged once more `settleMs` later. Every instance refuses its own late
 * answers by its own log, and its own purge drops what it stored before it; but an instance whose
 * feed is behind this one's can still store an answer read before the change after this purge, and
 * the instances ahead serve it until the one behind hands the change on. The second purge drops
 * those stored within `settleMs` (one database deadline: every read begun before the change has
 * ended by then); an instance more than `settleMs` behind can store after it too, until its own
 * purge.
 */
export function purgeOnChange(
  subscribe: (listener: (scope: CacheScope) => Promise<void>) => () => void,
  stores: readonly ResponseStore[],
  purges: PurgeLog,
  settleMs: number,
): () => void {
  const purgeOne = async (store: ResponseStore, scope: CacheScope) => {
    if (scope === 'all') return store.purge();
    const filters = (await store.filterTags()).filter((tag) => scope.touches(tag));
    return store.purgeTags([...scope.tags, ...filters]);
  };
  const purge = (scope: CacheScope, which: readonly ResponseStore[]) =>
    Promise.all(which.map((store) => purgeOne(store, scope)));
  const shared = stores.filter((store) => store.scope === 'shared');
  const timers = new Set<NodeJS.Timeout>();
  // The feed waits for the first purge: a request it then lets read the cache finds no entry from before.
  const unsubscribe = subscribe((scope: CacheScope) => {
    purges.record(scope);
    if (shared.length > 0) {
      const again = setTimeout(() => {
        timers.delete(again);
        void purge(scope, shared);
      }, settleMs);
      again.unref();
      timers.add(again);
    }
    return purge(scope, stores).then(() => undefined);
  });
  return () => {
    for (const timer of timers) clearTimeout(timer);
    unsubscribe();
  };
}
