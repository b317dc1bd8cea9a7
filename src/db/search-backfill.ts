import type { AnyBulkWriteOperation, Db, Document } from 'mongodb';
import type { FeedChange } from './feed-types';
import { GRAM_SOURCE_FIELDS, gramWrites } from './search-grams-writer';
import { bumpGramsEpoch } from './grams-epoch';
import { FEED_COMMENT } from './feed-types';
import { statesComplete, writeStates } from './search-state';

/**
 * `npm run search:index`: reads every product's text and writes current grams where the stored
 * ones were not made from it (missing, stale or copied), batch by batch. The change feed keeps
 * grams current from then on; this is for the first run, and a repair after writes the feed did
 * not see (a document without a date in `updated_at`). A run writes only what differs, so running
 * it again after an interruption costs one read of the catalogue.
 */

export const DEFAULT_BACKFILL_BATCH = 1_000;
export const MAX_BACKFILL_BATCH = 10_000;

export interface BackfillProgress {
  /** Products checked so far. */
  checked: number;
  /** Of them, those given new grams. */
  written: number;
  /** Products counted at the start. */
  total: number;
}

export interface BackfillOptions {
  batchSize?: number;
  onProgress?: (progress: BackfillProgress) => void;
  /** The commands' comment (the change feed's resync names itself, as its other background reads do). */
  comment?: string;
}

/** The product a gram write is for, as the feed would hand it on. */
const rewrittenProduct = (write: AnyBulkWriteOperation<Document>): FeedChange<Document> => ({
  _id: (write as { updateOne: { filter: { _id: unknown } } }).updateOne.filter._id,
  document: null,
});

export async function backfillSearchGrams(db: Db, options: BackfillOptions = {}): Promise<BackfillProgress> {
  const { batchSize = DEFAULT_BACKFILL_BATCH, onProgress, comment } = options;
  const products = db.collection<Document>('products');
  const total = await products.countDocuments({}, { comment });
  const progress: BackfillProgress = { checked: 0, written: 0, total };
  onProgress?.(progress);
  // One cursor in `_id` order, whatever type the `_id`s are.
  const cursor = products.find({}, { projection: GRAM_SOURCE_FIELDS, batchSize, comment }).sort({ _id: 1 });
  let batch: Document[] = [];
  // Before-images are kept only once complete (else the server's first start fills them).
  const images = await statesComplete(db);
  const flush = async () => {
    const writes = gramWrites(batch);
    if (writes.length > 0) {
      await products.bulkWrite(writes, { ordered: false, comment: FEED_COMMENT });
      // The feed saw none of this: the before-images of what changed, then the mark that tells
      // running servers their kept totals may be of the old grams (src/db/grams-epoch.ts).
      if (images) await writeStates(db, writes.map(rewrittenProduct));
      await bumpGramsEpoch(db);
    }
    progress.written += writes.length;
    progress.checked += batch.length;
    batch = [];
    onProgress?.(progress);
  };
  try {
    for await (const doc of cursor) {
      batch.push(doc);
      if (batch.length >= batchSize) await flush();
    }
    if (batch.length > 0) await flush();
  } finally {
    await cursor.close();
  }
  return progress;
}
