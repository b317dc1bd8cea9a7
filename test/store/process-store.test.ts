import { describe, expect, it } from 'vitest';
import type { CacheScope } from '../../src/db/derived/cache-scope';
import {
  createProcessResponseStore,
  createPurgeLog,
  purgeOnChange,
  responseStores,
} from '../../src/store/response-store';

/** One process's store: filter tags listed while their entries live, and a change's scoped purge. */

const budget = { maxBytes: 1_000_000, maxEntryBytes: 100_000 };

/** A process store purged by the changes the test hands to `listener`, re-purged `settleMs` later where it must be. */
function followedStore(settleMs: number) {
  const stores = responseStores(undefined, budget, 60_000);
  const store = stores.create();
  let listen!: (scope: CacheScope) => Promise<void>;
  const stop = purgeOnChange(
    (next) => ((listen = next), () => undefined),
    [...stores.all],
    stores.purges,
    settleMs,
  );
  return { store, listener: (scope: CacheScope) => listen(scope), stop };
}
const gift = 'list:[null,["gift"]]';
const card = 'list:[null,["card"]]';

describe('the process response store', () => {
  it('lists a filter tag while an entry holding it lives, and forgets it after', async () => {
    const store = createProcessResponseStore(budget);
    await store.set('a', 'A', 20, [gift, 'product:1']);
    await store.set('b', 'B', 60_000, [card]);
    expect((await store.filterTags()).sort()).toEqual([card, gift]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await store.filterTags()).toEqual([card]);
  });

  it('purges on a change the entries it names and those of the filters it touches, no others', async () => {
    const store = createProcessResponseStore(budget);
    await store.set('gift page', 'G', 60_000, [gift]);
    await store.set('card page', 'C', 60_000, [card]);
    await store.set('product 7', 'P', 60_000, ['product:7']);
    let listener!: (scope: CacheScope) => Promise<void>;
    const stop = purgeOnChange(
      (next) => ((listener = next), () => undefined),
      [store],
      createPurgeLog(60_000),
      60_000,
    );
    await listener({ tags: ['product:7'], touches: (tag) => tag === gift });
    expect([
      await store.get('gift page'),
      await store.get('card page'),
      await store.get('product 7'),
    ]).toEqual([undefined, 'C', undefined]);
    await listener('all');
    expect(await store.get('card page')).toBeUndefined();
    stop();
  });

  it('stores an answer only if no purge since its reads began could alter it', async () => {
    const { store, listener, stop } = followedStore(60_000);
    const since = store.since();
    // A change to product 7 that enters the gift filter, purged while the answers were being read.
    await listener({ tags: ['product:7'], touches: (tag) => tag === gift });
    expect(store.set('product 7', 'P', 60_000, ['product:7'], since)).toBe(false);
    // A filter no entry held when the purge ran: the change is kept as its predicate.
    expect(store.set('gift page', 'G', 60_000, [gift, 'product:1'], since)).toBe(false);
    expect(store.set('card page', 'C', 60_000, [card, 'product:2'], since)).toBe(true);
    // Begun after the purge: stored.
    expect(store.set('gift page', 'G', 60_000, [gift, 'product:7'], store.since())).toBe(true);
    expect([
      await store.get('product 7'),
      await store.get('gift page'),
      await store.get('card page'),
    ]).toEqual([undefined, 'G', 'C']);
    const before = store.since();
    await listener('all');
    expect(store.set('card page', 'C', 60_000, [card], before)).toBe(false);
    stop();
  });

  it('refuses an answer begun before a purge it no longer remembers', () => {
    const purges = createPurgeLog(60_000, 2);
    const since = purges.now();
    for (let n = 0; n < 3; n++) purges.record({ tags: [`product:${n}`], touches: () => false });
    // The first purge (product 0) is forgotten: anything begun before it may have missed it.
    expect(purges.touchedSince(since, [card])).toBe(true);
    expect(purges.touchedSince(since + 1, [card])).toBe(false);
    expect(purges.touchedSince(since + 1, ['product:2'])).toBe(true);
  });

  it('does not purge a process store a second time', async () => {
    const { store, listener, stop } = followedStore(20);
    await listener({ tags: ['product:7'], touches: () => false });
    // Read after the change, stored after its purge: kept past the old second purge's moment.
    expect(store.set('product 7', 'P', 60_000, ['product:7'], store.since())).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await store.get('product 7')).toBe('P');
    stop();
  });
});
