/**
 * Exact totals of product filters (and the catalogue's counts by category and by brand), each
 * counted once and served to every page and repeat of its filter until the change feed reports a
 * change (then all are dropped: a written product may enter or leave any filter). Exact as of the
 * last change seen, never an estimate; a filter not yet counted is counted. A count that was
 * running when a change came is not kept.
 */

/** Filters whose totals are kept; the least recently used go first. */
const MAX_TOTALS = 10_000;

/**
 * A total counted while nothing was pending (so it equals the count over the products'
 * before-images: src/db/total-adjust.ts), and whether it is still kept (no change handed on since).
 */
export interface CleanTotal {
  total: number;
  /** When its count started (this server's clock). */
  countedFrom: Date;
  current(): boolean;
}

export interface TotalCache {
  /**
   * The total of `key`: remembered, joined while being counted, or counted by `count`. `clean`
   * (numeric totals only), asked once the count answered, says whether nothing was pending when
   * it read: then the total may also be adjusted while writes are pending (clean).
   */
  get<T = number>(key: string, count: () => Promise<T>, clean?: () => Promise<boolean>): Promise<T>;
  /** The total of `key` if it is kept and was counted clean. */
  clean(key: string): CleanTotal | undefined;
  /** Drops every total (the feed saw a change). */
  invalidate(): void;
}

interface Entry {
  // Each key is only ever given one `count`, so its promise holds that count's type.
  counting: Promise<unknown>;
  countedFrom: Date;
  clean?: number;
}

export function createTotalCache(maxTotals = MAX_TOTALS): TotalCache {
  let totals = new Map<string, Entry>();
  return {
    get<T>(key: string, count: () => Promise<T>, clean?: () => Promise<boolean>) {
      const known = totals.get(key);
      if (known) {
        // Re-inserted: Map order is recency order.
        totals.delete(key);
        totals.set(key, known);
        return known.counting as Promise<T>;
      }
      const kept = totals;
      const countedFrom = new Date();
      const counting = count();
      const entry: Entry = { counting, countedFrom };
      kept.set(key, entry);
      if (kept.size > maxTotals) kept.delete(kept.keys().next().value!);
      // A failed count is not remembered: the next request counts again.
      entry.counting.catch(() => kept.get(key) === entry && kept.delete(key));
      // Clean only if no change was handed on from its start until `clean` answered.
      if (clean)
        entry.counting
          .then(async (total) => {
            if ((await clean()) && totals === kept) entry.clean = total as number;
          })
          .catch(() => undefined);
      return counting;
    },
    clean(key) {
      const kept = totals;
      const entry = kept.get(key);
      return entry?.clean === undefined
        ? undefined
        : { total: entry.clean, countedFrom: entry.countedFrom, current: () => totals === kept };
    },
    invalidate() {
      // A new map: counts still running finish into the old one, which nobody reads.
      totals = new Map();
    },
  };
}
