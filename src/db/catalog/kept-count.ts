import type { ChangeFeed } from '../change-feed';
import type { GroupTally, Grouping } from './product-groups';
import type { ProductCriteria } from './product-plans';
import type { TotalCache } from './total-cache';

/** The key a filter's total is kept under: the category as matched, the words in any order. */
export function totalKey(criteria: ProductCriteria): string {
  return JSON.stringify([criteria.category?.toLowerCase() ?? null, [...criteria.words].sort()]);
}

/** The criteria of a totalKey (the category as matched); undefined for any other key. */
export function criteriaOfKey(key: string): ProductCriteria | undefined {
  if (!key.startsWith('[')) return undefined;
  const [category, words] = JSON.parse(key) as [string | null, string[]];
  return category === null ? { words } : { words, category };
}

type Count = (signal?: AbortSignal) => Promise<number>;

/**
 * Kept totals where the feed reads the engine's log: a total is served from the cache once this
 * instance has handed on every write committed before the request (its purge of the totals has
 * run). A search's count is exact then whatever the grams' holder has written (the products it
 * has not are counted on themselves: src/db/catalog/product-counts.ts), so a fleet's grams falling
 * behind (a bulk write) never makes a kept total count. Otherwise the request counts.
 */
export function createLogKeptCount(feed: Pick<ChangeFeed<unknown>, 'handedOn'>, totals: TotalCache) {
  return async function keptCount(
    criteria: ProductCriteria,
    count: Count,
    signal?: AbortSignal,
  ): Promise<number> {
    if (!(await feed.handedOn())) {
      totals.countedUncached();
      return count(signal);
    }
    // Shared by every request of the filter: one client leaving does not abort it (maxTimeMS bounds
    // it). Moved by later changes once the feed has handed on everything the count may have seen.
    return totals.get(
      totalKey(criteria),
      () => count(),
      () => feed.handedOn(),
    );
  };
}

/**
 * Kept counts by group: exact while the feed has handed on every write, else counted. Shared by
 * every request of its key: one client leaving does not abort it (maxTimeMS bounds it).
 */
export function createKeptGroups(
  feed: Pick<ChangeFeed<unknown>, 'handedOn' | 'hasUnhandled' | 'mode'> | undefined,
  totals: TotalCache | undefined,
) {
  return async function keptGroups(
    grouping: Grouping,
    counted: (abort?: AbortSignal) => Promise<GroupTally>,
    signal?: AbortSignal,
  ): Promise<GroupTally> {
    if (!totals || !feed) return counted(signal);
    // Counted by group, never through the grams: the log's own position is enough.
    const log = feed.mode === 'log';
    if (!(log ? await feed.handedOn() : !(await feed.hasUnhandled()))) {
      totals.countedUncached();
      return counted(signal);
    }
    // From the log, a change after the count moves the tally (src/db/derived/total-moves.ts).
    return totals.get(grouping, () => counted(), log ? () => feed.handedOn() : undefined);
  };
}
