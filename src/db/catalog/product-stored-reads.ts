import type { Collection, Document, Filter } from 'mongodb';
import { amongKeys, keysWithin, mergeWindow, pageSlots, type foreignKeyProbe } from '../foreign-keys';
import { productFilter, type ProductCriteria } from './product-plans';
import type { createOwnReads } from './product-own-reads';
import { listedId, onKeys, PROJECTION, raw, unfiltered, type KeysetWindow, type Raw } from './product-rows';

/**
 * The stored rows of a page or a window: the own-keyed rows (src/db/catalog/product-own-reads.ts)
 * merged in id order with those other writers keyed their own way (src/db/foreign-keys.ts).
 */

export interface StoredReadOptions {
  stored: Collection;
  reads: object;
  foreignKeys: ReturnType<typeof foreignKeyProbe<number>>;
  /** A category no product has: its page is empty, without walking the collection for it. */
  emptyCategory: (criteria: ProductCriteria, signal?: AbortSignal) => Promise<boolean>;
  own: ReturnType<typeof createOwnReads>;
}

export function createStoredReads({ stored, reads, foreignKeys, emptyCategory, own }: StoredReadOptions) {
  const ownPage = own.page;
  const ownWindow = own.window;
  /** Products sorted by their `id` field: for a collection most of which other writers keyed. */
  function byIdField(filter: Filter<Document>, direction: 1 | -1, signal?: AbortSignal) {
    return stored.find(filter, { projection: PROJECTION, ...reads, signal }).sort({ id: direction });
  }

  /** The stored rows of a page: own-keyed rows merged with other writers' in id order. */
  async function storedPage(criteria: ProductCriteria, skip: number, limit: number, signal?: AbortSignal) {
    if (await emptyCategory(criteria, signal)) return [];
    const foreign = await foreignKeys();
    // Keys below every number (null, MinKey) would shift the offsets of the own rows: rare enough
    // to read such a collection the slow way.
    if (foreign.overflow || foreign.below > 0)
      return byIdField(raw(productFilter(criteria)), 1, signal)
        .skip(skip)
        .limit(limit)
        .toArray();
    if (foreign.keys.length === 0) return ownPage(criteria, skip, limit, signal);
    // Without a filter every foreign product matches: their ids are known already.
    const matching = unfiltered(criteria)
      ? foreign.keys.map(({ value }) => value)
      : (
          await stored
            .find(
              amongKeys(
                raw(productFilter(criteria)),
                foreign.keys.map(({ key }) => key),
              ),
              {
                projection: { _id: 0, id: 1 },
                ...reads,
                signal,
              },
            )
            .toArray()
        )
          .map((row) => row.id as number)
          .sort((a, b) => a - b);
    const ownSkip = Math.max(0, skip - matching.length);
    const own = await ownPage(criteria, ownSkip, limit + (skip - ownSkip), signal);
    const slots = pageSlots(own, ownSkip, matching, listedId, skip, limit);
    const wanted = new Set(slots.flatMap((slot) => ('foreign' in slot ? [slot.foreign] : [])));
    const theirs = new Map<number, Raw>();
    if (wanted.size > 0) {
      const keys = foreign.keys.filter(({ value }) => wanted.has(value)).map(({ key }) => key);
      const rows = await stored
        .find(onKeys({ $in: keys }), { projection: PROJECTION, ...reads, signal })
        .toArray();
      for (const row of rows) theirs.set(row.id as number, row);
    }
    return slots.flatMap((slot) => {
      if ('own' in slot) return [slot.own];
      const row = theirs.get(slot.foreign);
      return row ? [row] : [];
    });
  }

  /** The stored rows of a keyset window, own-keyed and other writers' merged in id order. */
  async function storedWindow(criteria: ProductCriteria, window: KeysetWindow, signal?: AbortSignal) {
    const direction = window.descending ? -1 : 1;
    if (await emptyCategory(criteria, signal)) return [];
    const foreign = await foreignKeys();
    if (foreign.overflow) {
      const idRange: { $gt?: number; $lt?: number } = {};
      if (window.afterId !== undefined) idRange.$gt = window.afterId;
      if (window.beforeId !== undefined) idRange.$lt = window.beforeId;
      const base = raw(productFilter(criteria));
      const filter = Object.keys(idRange).length > 0 ? { $and: [base, { id: idRange }] } : base;
      return byIdField(filter, direction, signal).limit(window.limit).toArray();
    }
    // Other writers' keys on the side the walk starts from would come first in `_id` order.
    const foreignFirst = window.descending ? foreign.above : foreign.below;
    const inRange = keysWithin(foreign.keys, { after: window.afterId, before: window.beforeId });
    // Unfiltered, only the first `limit` of them in the window's order can be in it.
    const keys = !unfiltered(criteria)
      ? inRange
      : window.descending
        ? inRange.slice(-window.limit)
        : inRange.slice(0, window.limit);
    const [own, theirs] = await Promise.all([
      ownWindow(criteria, window, foreignFirst > 0, signal),
      keys.length === 0
        ? []
        : stored
            .find(amongKeys(raw(productFilter(criteria)), keys), { projection: PROJECTION, ...reads, signal })
            .sort({ id: direction })
            .limit(window.limit)
            .toArray(),
    ]);
    return mergeWindow(own, theirs, listedId, direction, window.limit);
  }

  return { page: storedPage, window: storedWindow };
}
