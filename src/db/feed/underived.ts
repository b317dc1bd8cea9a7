import type { Lsn } from './lsn';

/**
 * Which documents the fleet's derived state (the search projection, written by the lasting slot's
 * holder) may not reflect yet, as this instance's own channel saw them: every `_id` it handed on,
 * with where its transaction's commit ends. A search then reads the projection for everything
 * else and those few from the documents (src/db/catalog/product-pending-reads.ts), instead of
 * scanning the collection while the holder writes an owner's bulk update (20,000 rows: 30 s or
 * more at ~1.5 ms a row; a scan of 1,000,000 outlasts the read bound).
 *
 * A document is still underived while the lasting slot's confirmed position is before its commit's
 * end (the holder confirms a transaction only after writing all of it). What the own channel did
 * not see (before its slot was made, across a reopening, past the bound) is unknown until the
 * lasting slot passes the own channel's next position: then `ids` says undefined (scan).
 */

/** The most `_id`s kept: an owner's bulk update of 20,000 fits; past it, searches scan until the holder catches up. */
export const MAX_UNDERIVED = 25_000;

/** Not known yet: a part of a transaction still being handed on, or an unknown span's end. */
const OPEN = (1n << 64n) - 1n;

/** `_id`s of any type as one key (1 and '1' differ). */
const idKey = (id: unknown) => `${typeof id}:${String(id)}`;

export interface Underived {
  ids: unknown[];
  version: number;
}

export function createUnderived(max = MAX_UNDERIVED) {
  /** Per collection, in the order handed on (so in commit order): key → the id and its commit's end. */
  const byCollection = new Map<string, Map<string, { id: unknown; lsn: Lsn }>>();
  /** Entries of the transaction being handed on in parts, waiting for its commit's end. */
  let openParts: { lsn: Lsn }[] = [];
  let inParts = false;
  /** Until the lasting slot passes this, what it has not written is not all known here. */
  let unknownUntil: Lsn = OPEN;
  let size = 0;
  /** Moves with every change noted: a search's matches among the ids read at one version stay right while it holds. */
  let version = 0;

  function forget(): void {
    version++;
    byCollection.clear();
    openParts = [];
    size = 0;
    unknownUntil = OPEN;
  }

  function prune(entries: Map<string, { id: unknown; lsn: Lsn }>, derived: Lsn): void {
    for (const [key, entry] of entries) {
      if (entry.lsn > derived) return;
      entries.delete(key);
      size--;
    }
  }

  return {
    /** The own channel hands on changes of `collection` in a transaction ending at `endLsn` (0n: a part). */
    noted(collection: string, ids: readonly unknown[], endLsn: Lsn): void {
      version++;
      const entries = byCollection.get(collection) ?? new Map<string, { id: unknown; lsn: Lsn }>();
      byCollection.set(collection, entries);
      for (const id of ids) {
        const key = idKey(id);
        if (entries.delete(key)) size--;
        const entry = { id, lsn: endLsn === 0n ? OPEN : endLsn };
        entries.set(key, entry);
        size++;
        if (endLsn === 0n) openParts.push(entry);
      }
      if (endLsn === 0n) inParts = true;
      if (size > max) forget();
    },
    /** A transaction ended at `endLsn`: the entries of its parts get their position. */
    ended(endLsn: Lsn): void {
      for (const entry of openParts) entry.lsn = endLsn;
      openParts = [];
      inParts = false;
    },
    /** The own channel has handed on everything before `lsn`. */
    reached(lsn: Lsn): void {
      if (unknownUntil === OPEN && !inParts) unknownUntil = lsn;
    },
    /** The own channel (re)opened: what was committed while none was open is unknown. */
    reopened(): void {
      forget();
      inParts = false;
    },
    /**
     * The `_id`s of `collection` the lasting slot, confirmed at `derived`, may not have written,
     * and the version they were read at (no change was handed on since while it is the same);
     * undefined while that is not known.
     */
    ids(collection: string, derived: Lsn): Underived | undefined {
      if (derived < unknownUntil) return undefined;
      const entries = byCollection.get(collection);
      if (entries) prune(entries, derived);
      return { ids: entries ? [...entries.values()].map((entry) => entry.id) : [], version };
    },
  };
}
