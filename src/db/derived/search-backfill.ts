import type { Db, Document } from 'mongodb';
import type { FeedChange } from '../feed-types';
import { forEachIdBatch } from '../id-batches';
import { bumpGramsEpoch } from './grams-epoch';
import { FEED_COMMENT } from '../feed-types';
import { statesComplete, writeStates } from './search-state';
import { orphansAmong, PROJECTED_SOURCE, rowsToWrite, writeRows, type OnRefused } from './search-projection';
import { markProjectionComplete, SEARCH_PROJECTION_COLLECTION } from '../catalog/search-projection-mark';

/**
 * `npm run search:index`, the log's resync, and polling's answer to unseen changes: makes the
 * search projection (src/db/derived/search-projection.ts) what the products say, batch by batch (a row
 * written where it is missing or differs, a row without a product deleted), then marks it
 * complete. The change feed keeps it current from then on. A run writes only what differs, so
 * running it again after an interruption costs one read of the catalogue.
 */

export const DEFAULT_BACKFILL_BATCH = 1_000;
export const MAX_BACKFILL_BATCH = 10_000;

export interface BackfillProgress {
  /** Products checked so far. */
  checked: number;
  /** Of them, those whose row was written. */
  written: number;
  /** Products counted at the start. */
  total: number;
  /** Rows deleted: their products are gone. */
  removed?: number;
}

export interface BackfillOptions {
  batchSize?: number;
  onProgress?: (progress: BackfillProgress) => void;
  /** The commands' comment (the change feed's resync names itself, as its other background reads do). */
  comment?: string;
  /** Told of each row the database refused (written stale instead: src/db/derived/search-projection.ts). */
  onRefused?: OnRefused;
}

/** A product whose row was written, as the feed would hand it on (for the before-images). */
const rewritten = (_id: unknown): FeedChange<Document> => ({ _id, document: null });

/** Deletes the rows whose products are gone; returns how many. */
async function removeOrphans(db: Db, batchSize: number, comment?: string): Promise<number> {
  const rows = db.collection(SEARCH_PROJECTION_COLLECTION);
  const products = db.collection('products');
  let removed = 0;
  await forEachIdBatch(rows, { projection: { _id: 1 }, batchSize, comment }, async (batch) => {
    const orphans = await orphansAmong(
      products,
      batch.map((row) => row._id),
      comment,
    );
    if (orphans.length > 0)
      removed += (await rows.deleteMany({ _id: { $in: orphans } } as Document, { comment: FEED_COMMENT }))
        .deletedCount;
  });
  return removed;
}

export async function syncSearchProjection(db: Db, options: BackfillOptions = {}): Promise<BackfillProgress> {
  const { batchSize = DEFAULT_BACKFILL_BATCH, onProgress, comment, onRefused } = options;
  const products = db.collection<Document>('products');
  const rows = db.collection(SEARCH_PROJECTION_COLLECTION);
  const total = await products.countDocuments({}, { comment });
  const progress: BackfillProgress = { checked: 0, written: 0, total };
  onProgress?.(progress);
  // Before-images (polling) are kept only once complete (else the server's first start fills them).
  const images = await statesComplete(db);
  // In `_id` order, whatever type the `_id`s are, a query per batch.
  await forEachIdBatch(products, { projection: PROJECTED_SOURCE, batchSize, comment }, async (batch) => {
    const writes = await rowsToWrite(rows, batch, comment);
    if (writes.length > 0) {
      await writeRows(rows, writes, onRefused);
      // The feed saw none of this: the before-images of what changed, then the mark that tells
      // polling servers their kept totals may be of the old rows (src/db/derived/grams-epoch.ts).
      if (images)
        await writeStates(
          db,
          writes.map((write) =>
            rewritten((write as { replaceOne: { filter: { _id: unknown } } }).replaceOne.filter._id),
          ),
        );
      await bumpGramsEpoch(db);
    }
    progress.written += writes.length;
    progress.checked += batch.length;
    onProgress?.(progress);
  });
  progress.removed = await removeOrphans(db, batchSize, comment);
  if (progress.removed > 0) await bumpGramsEpoch(db);
  await markProjectionComplete(db);
  onProgress?.(progress);
  return progress;
}
