/**
 * Exact totals of product filters (and the catalogue's counts by category and by brand), each
 * counted once and served to every page and repeat of its filter. Where the feed hands on each
 * change with the document before it (the log), a change moves the totals it touches
 * (src/db/derived/total-moves.ts); elsewhere, or where a move is unsure, it drops them. Exact as of the
 * last change seen, never an estimate; a filter not yet counted is counted. A count that was
 * running when a change came is not kept.
 */

/** Filters whose totals are kept; the least recently used go first. */
const MAX_TOTALS = 10_000;

/** What a move answers for a total it cannot move for sure: the total is dropped. */
export const DROP = Symbol('drop the total');
/** A kept total's value after a change: moved, or DROP. */
export type TotalMove = (key: string, value: unknown) => unknown;

/**
 * Why a total was counted: never kept; dropped by a change it could not be moved by for sure
 * (`write`); dropped because a change came while it was still being counted or settling
 * (`counting`); evicted; or the feed was behind the request (`not_current`).
 */
export type CountReason = 'first' | 'write' | 'counting' | 'evicted' | 'not_current';
type Gone = 'write' | 'counting' | 'evicted';

/**
 * A total counted while nothing was pending (so it equals the count over the products'
 * before-images: src/db/catalog/total-adjust.ts), and whether it is still kept (no change handed on since).
 */
export interface CleanTotal {
  total: number;
  /** When its count started (this server's clock). */
  countedFrom: Date;
  current(): boolean;
}

export interface TotalCache {
  /**
   * The total of `key`: remembered, joined while being counted, or counted by `count`. `settled`,
   * asked once the count answered, says whether every change the count may not have seen is still
   * to come (polling: nothing was pending when it read; the log: the feed has handed on everything
   * committed before now). Only then may later changes move the total, or adjust it (`clean`).
   */
  get<T = number>(key: string, count: () => Promise<T>, settled?: () => Promise<boolean>): Promise<T>;
  /** The total of `key` if it is kept and was counted clean. */
  clean(key: string): CleanTotal | undefined;
  /** Moves every settled total by `move`; drops those it answers DROP for and those not settled. */
  move(move: TotalMove): void;
  /** Drops every total (the feed saw a change it cannot move them by). */
  invalidate(): void;
  /** A request counted without the kept totals (the feed was behind). */
  countedUncached(): void;
  /** How many counts each reason has caused so far. */
  counts(): Readonly<Record<CountReason, number>>;
}

interface Entry {
  // Each key is only ever given one `count`, so its promise holds that count's type.
  counting: Promise<unknown>;
  countedFrom: Date;
  /** Its value once settled: changes may move it from then on. */
  settled?: { value: unknown };
  clean?: number;
}

/** How many counts each reason caused, and why each key let go was let go (bounded). */
function createCountLedger(maxKeys: number) {
  const counts: Record<CountReason, number> = { first: 0, write: 0, counting: 0, evicted: 0, not_current: 0 };
  const gone = new Map<string, Gone>();
  return {
    /** A count of `key` starts: its reason is why it was let go, or that it never was kept. */
    counted(key: string) {
      counts[gone.get(key) ?? 'first']++;
      gone.delete(key);
    },
    uncached: () => counts.not_current++,
    forget(key: string, reason: Gone) {
      gone.delete(key);
      gone.set(key, reason);
      if (gone.size > maxKeys) gone.delete(gone.keys().next().value!);
    },
    counts: () => ({ ...counts }),
  };
}

export function createTotalCache(maxTotals = MAX_TOTALS): TotalCache {
  let totals = new Map<string, Entry>();
  const ledger = createCountLedger(maxTotals);
  function settle(key: string, kept: Map<string, Entry>, entry: Entry, settled: () => Promise<boolean>) {
    entry.counting
      .then(async (value) => {
        if (!(await settled()) || totals !== kept || kept.get(key) !== entry) return;
        entry.settled = { value };
        if (typeof value === 'number') entry.clean = value;
      })
      .catch(() => undefined);
  }
  return {
    get<T>(key: string, count: () => Promise<T>, settled?: () => Promise<boolean>) {
      const known = totals.get(key);
      if (known) {
        // Re-inserted: Map order is recency order.
        totals.delete(key);
        totals.set(key, known);
        return known.counting as Promise<T>;
      }
      ledger.counted(key);
      const kept = totals;
      const entry: Entry = { counting: count(), countedFrom: new Date() };
      kept.set(key, entry);
      if (kept.size > maxTotals) {
        const oldest = kept.keys().next().value!;
        kept.delete(oldest);
        ledger.forget(oldest, 'evicted');
      }
      // A failed count is not remembered: the next request counts again.
      entry.counting.catch(() => kept.get(key) === entry && kept.delete(key));
      if (settled) settle(key, kept, entry, settled);
      return entry.counting as Promise<T>;
    },
    clean(key) {
      const kept = totals;
      const entry = kept.get(key);
      return entry?.clean === undefined
        ? undefined
        : { total: entry.clean, countedFrom: entry.countedFrom, current: () => totals === kept };
    },
    move(move) {
      for (const [key, entry] of totals) {
        const moved = entry.settled ? move(key, entry.settled.value) : DROP;
        if (moved === DROP) {
          totals.delete(key);
          ledger.forget(key, entry.settled ? 'write' : 'counting');
        } else {
          entry.settled = { value: moved };
          entry.counting = Promise.resolve(moved);
        }
      }
    },
    invalidate() {
      for (const key of totals.keys()) ledger.forget(key, 'write');
      // A new map: counts still running finish into the old one, which nobody reads.
      totals = new Map();
    },
    countedUncached: ledger.uncached,
    counts: ledger.counts,
  };
}
