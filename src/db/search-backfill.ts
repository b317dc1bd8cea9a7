import type { AnyBulkWriteOperation, Db, Document, Filter } from 'mongodb';
import type { SearchableText } from './search-grams';
import { searchFields, UNINDEXED_FILTER } from './product-search';

/**
 * `npm run search:index`: writes current grams onto products that lack them (written by another
 * system, or by older gram rules), batch by batch in id order. Each batch is committed on its own,
 * so an interrupted run loses nothing: the next run finds what is still missing.
 */

export const DEFAULT_BACKFILL_BATCH = 1_000;
export const MAX_BACKFILL_BATCH = 10_000;

interface RawProduct extends Document {
  _id: number;
}

const TEXT_FIELDS = { name: 1, short_description: 1, brand_name: 1, category_name: 1, tags: 1 } as const;

export interface BackfillProgress {
  done: number;
  /** Products to do, counted at the start. */
  total: number;
  /** The last id written, to resume an `all` run with `afterId`. */
  lastId: number;
}

export interface BackfillOptions {
  batchSize?: number;
  /** Every product, not only those with missing or stale grams (after writers changed text). */
  all?: boolean;
  /** With `all`: resume after this id. */
  afterId?: number;
  onProgress?: (progress: BackfillProgress) => void;
}

/** Strings of a field as the regex sees them: a string, or the strings of an array. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/**
 * Written by any system, a field may be missing, another type or an array. A regex matches
 * strings (and an array's string elements): those are the text. Joining with a space keeps each
 * string's tokens apart, so no gram spans two of them.
 */
export function searchableTextOf(doc: Document): SearchableText {
  const text = (field: string) => strings(doc[field]).join(' ');
  return {
    name: text('name'),
    short_description: text('short_description'),
    brand_name: text('brand_name'),
    category_name: text('category_name'),
    tags: strings(doc.tags),
  };
}

export async function backfillSearchGrams(db: Db, options: BackfillOptions = {}): Promise<BackfillProgress> {
  const { batchSize = DEFAULT_BACKFILL_BATCH, all = false, onProgress } = options;
  // Any shape another system may have written, keyed by the product id.
  const products = db.collection<RawProduct>('products');
  const todo = (all ? {} : UNINDEXED_FILTER) as Filter<RawProduct>;
  const progress: BackfillProgress = {
    done: 0,
    total: await products.countDocuments(
      all && options.afterId !== undefined ? { _id: { $gt: options.afterId } } : todo,
    ),
    lastId: options.afterId ?? Number.NEGATIVE_INFINITY,
  };
  onProgress?.(progress);
  for (;;) {
    const after = Number.isFinite(progress.lastId) ? { _id: { $gt: progress.lastId } } : {};
    const batch = await products
      .find({ $and: [todo, after] }, { projection: TEXT_FIELDS })
      .sort({ _id: 1 })
      .limit(batchSize)
      .toArray();
    if (batch.length === 0) return progress;
    const writes: AnyBulkWriteOperation<RawProduct>[] = batch.map((doc) => ({
      updateOne: { filter: { _id: doc._id }, update: { $set: searchFields(searchableTextOf(doc)) } },
    }));
    await products.bulkWrite(writes, { ordered: false });
    progress.done += batch.length;
    progress.lastId = batch[batch.length - 1]!._id;
    onProgress?.(progress);
  }
}
