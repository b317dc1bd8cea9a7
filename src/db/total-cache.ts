/**
 * Exact totals of product filters (and the catalogue's counts by category and by brand), each
 * counted once and served to every page and repeat of its filter until the change feed reports a
 * change (then all are dropped: a written product may enter or leave any filter). Exact as of the
 * last change seen, never an estimate; a filter not yet counted is counted. A count that was
 * running when a change came is not kept.
 */

/** Filters whose totals are kept; the least recently used go first. */
const MAX_TOTALS = 10_000;

export interface TotalCache {
  /** The total of `key`: remembered, joined while being counted, or counted by `count`. */
  get<T = number>(key: string, count: () => Promise<T>): Promise<T>;
  /** Drops every total (the feed saw a change). */
  invalidate(): void;
}

export function createTotalCache(maxTotals = MAX_TOTALS): TotalCache {
  // Each key is only ever given one `count`, so its promise holds that count's type.
  let totals = new Map<string, Promise<unknown>>();
  return {
    get<T>(key: string, count: () => Promise<T>) {
      const known = totals.get(key) as Promise<T> | undefined;
      if (known) {
        // Re-inserted: Map order is recency order.
        totals.delete(key);
        totals.set(key, known);
        return known;
      }
      const kept = totals;
      const counting = count();
      kept.set(key, counting);
      if (kept.size > maxTotals) kept.delete(kept.keys().next().value!);
      // A failed count is not remembered: the next request counts again.
      counting.catch(() => kept.get(key) === counting && kept.delete(key));
      return counting;
    },
    invalidate() {
      // A new map: counts still running finish into the old one, which nobody reads.
      totals = new Map();
    },
  };
}
