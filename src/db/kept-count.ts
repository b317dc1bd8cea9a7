import type { ChangeFeed } from './change-feed';
import type { ProductCriteria } from './product-plans';
import type { TotalCache } from './total-cache';

/** The key a filter's total is kept under: the category as matched, the words in any order. */
export function totalKey(criteria: ProductCriteria): string {
  return JSON.stringify([criteria.category?.toLowerCase() ?? null, [...criteria.words].sort()]);
}

type Count = (signal?: AbortSignal) => Promise<number>;

/**
 * Kept totals where the feed reads the engine's log: a total is served from the cache once this
 * instance has handed on every write committed before the request (its purge of the totals has
 * run); one of a search also needs the grams written that far (the slot holder's position). A
 * filter without words reads no grams, so a fleet's grams falling behind (a bulk write, a resync)
 * never makes it count. Otherwise the request counts.
 */
export function createLogKeptCount(
  feed: Pick<ChangeFeed<unknown>, 'handedOn' | 'hasUnhandled'>,
  totals: TotalCache,
) {
  return async function keptCount(
    criteria: ProductCriteria,
    count: Count,
    signal?: AbortSignal,
  ): Promise<number> {
    const current = criteria.words.length === 0 ? await feed.handedOn() : !(await feed.hasUnhandled());
    // Shared by every request of the filter: one client leaving does not abort it (maxTimeMS bounds it).
    return current ? totals.get(totalKey(criteria), () => count()) : count(signal);
  };
}
