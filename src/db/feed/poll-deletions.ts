import type { Collection, Document } from 'mongodb';
import { DATES, TEXTS } from './range';

/**
 * A count's interval is at least this many times its duration (0.25 % of a core a feed): at
 * 1,000,000 products a count took ~250 ms, which every 10 s was 2.5 % of a core a feed, and is
 * 0.25 % every 100 s. Deletions then show within that interval (the caches' lifetimes bound them
 * too); at 100,000 (~25 ms a count) the interval stays `reconcileMs`.
 */
const RECONCILE_SHARE = 400;
/**
 * Counts faster than this keep `reconcileMs` whatever the share says: a small collection's count
 * under load (5–15 ms) would otherwise stretch a short interval several-fold.
 */
const SLOW_COUNT_MS = 50;

/** How long after a count of `durationMs` the next one comes. */
function reconcileInterval(reconcileMs: number, durationMs: number): number {
  return durationMs < SLOW_COUNT_MS ? reconcileMs : Math.max(reconcileMs, durationMs * RECONCILE_SHARE);
}

export interface DeletionCountOptions {
  reconcileMs: number;
  /** False where no listener acts on a deletion: then the collection is never counted. */
  reportsDeletions: boolean;
  reads: object;
  /** Told when the count moved by more than the inserts seen explain. */
  onUnseenChanges: () => Promise<void>;
}

/**
 * Deletions leave nothing for a poll to find: the collection is counted every `reconcileMs` (longer
 * where counts are slow: RECONCILE_SHARE). Inserts seen are those created since the last count;
 * anything else that moved the count (a deletion, an insert without `created_at` or with an old
 * one) is reported as unseen changes. A deletion hidden by such an insert in the same interval is
 * bounded by the cache lifetimes instead.
 */
export async function countForDeletions(collection: Collection<Document>, options: DeletionCountOptions) {
  const { reconcileMs, reportsDeletions, reads, onUnseenChanges } = options;
  const countStarted = Date.now();
  let count = reportsDeletions ? await collection.countDocuments({}, reads) : 0;
  let every = reportsDeletions ? reconcileInterval(reconcileMs, Date.now() - countStarted) : Infinity;
  let inserted = new Set<string>();
  let reconciledAt = Date.now();
  return {
    /** Notes which of the documents just handed on were created since the last count. */
    handedOn(rows: readonly Document[]): void {
      if (reportsDeletions)
        for (const row of rows) if (isNewSince(row, reconciledAt)) inserted.add(String(row._id));
    },
    async reconcileIfDue(): Promise<void> {
      if (Date.now() - reconciledAt < every) return;
      const started = Date.now();
      const now = await collection.countDocuments({}, reads);
      every = reconcileInterval(reconcileMs, Date.now() - started);
      const expected = count + inserted.size;
      count = now;
      inserted = new Set();
      reconciledAt = started;
      if (now !== expected) await onUnseenChanges();
    },
  };
}

/** Created since `since`: an insert, not an update (a writer's clock error only costs a needless report). */
function isNewSince(row: Document, since: number): boolean {
  const created = DATES.time(row.created_at) ?? TEXTS.time(row.created_at);
  return created !== undefined && created >= since;
}
