import { describe, expect, it } from 'vitest';
import type { CacheScope } from '../../src/db/derived/cache-scope';
import { createProcessResponseStore, purgeOnChange } from '../../src/store/response-store';

/** One process's store: filter tags listed while their entries live, and a change's scoped purge. */

const budget = { maxBytes: 1_000_000, maxEntryBytes: 100_000 };
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
    const stop = purgeOnChange((next) => ((listener = next), () => undefined), [store], 60_000);
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
});
