import type { Collection, Document, Filter } from 'mongodb';
import type { Underived } from '../feed/underived';
import { idKey } from '../derived/search-projection';
import type { Raw } from './product-rows';

/**
 * A filter's matches among the products the log's slot holder has not written yet
 * (src/db/feed/underived.ts), by the filter's regexes on the products themselves, as `_id`s in
 * `_id` order. An owner's bulk update leaves 20,000 of them for 30 s or more, and testing them all
 * costs the database ~200 ms a read (100,000 products, idle), so a filter's matches are read once
 * per version of the pending set and reused while no change has been handed on since: the pending
 * set then only shrinks as the holder writes (matches it no longer holds are left out), and a
 * change that could alter a match moves the version first (a request waits for its own channel).
 */

/** Filters whose matches are kept; the oldest goes first. */
const MAX_FILTERS = 64;

interface Kept {
  version: number;
  /** How many ids were pending when read: while as many still are, none was written since. */
  pending: number;
  rows: Promise<Raw[]>;
}

export function createPendingMatches(stored: Collection, reads: object) {
  const kept = new Map<string, Kept>();

  function read(filter: Filter<Document>, pending: Underived): Promise<Raw[]> {
    // Shared by the requests of one filter: one client leaving does not abort it (maxTimeMS bounds
    // it). Unhinted: the planner looks the ids up (200-310 ms for 20,000 at 1,000,000 products,
    // idle) where a hint of the primary key walks it in order (780-860 ms).
    return stored
      .find({ $and: [filter, { _id: { $in: pending.ids } }] } as Filter<Document>, {
        projection: { _id: 1 },
        ...reads,
      })
      .sort({ _id: 1 })
      .batchSize(pending.ids.length + 1)
      .toArray() as Promise<Raw[]>;
  }

  /** `filter`'s matches among `pending`; `key` names the filter (the same key, the same filter). */
  return async function matchesOf(key: string, filter: Filter<Document>, pending: Underived): Promise<Raw[]> {
    let entry = kept.get(key);
    if (entry?.version !== pending.version) {
      entry = { version: pending.version, pending: pending.ids.length, rows: read(filter, pending) };
      kept.delete(key);
      kept.set(key, entry);
      if (kept.size > MAX_FILTERS) kept.delete(kept.keys().next().value!);
      const failed = entry;
      entry.rows.catch(() => {
        if (kept.get(key) === failed) kept.delete(key);
      });
    }
    const rows = await entry.rows;
    if (pending.ids.length === entry.pending) return rows;
    const still = new Set(pending.ids.map(idKey));
    return rows.filter((row) => still.has(idKey(row._id)));
  };
}
