import type { Db } from 'mongodb';
import { FEED_COMMENT } from '../feed-types';
import { POSITIONS_COLLECTION } from '../feed/watermarks';

/** The gateway's own collection of what a search reads (src/db/derived/search-projection.ts). */
export const SEARCH_PROJECTION_COLLECTION = 'product_search';

/** The mark of a complete sync, in `change_feed_positions` (never a followed collection's name). */
export const COMPLETE_MARK = SEARCH_PROJECTION_COLLECTION;

/** Whether every product has had its row written once (a sync completed): until then searches scan. */
export async function projectionComplete(db: Db, reads: object = {}): Promise<boolean> {
  const marks = db.collection<{ _id: string }>(POSITIONS_COLLECTION);
  return (await marks.findOne({ _id: COMPLETE_MARK }, { comment: FEED_COMMENT, ...reads })) !== null;
}

export async function markProjectionComplete(db: Db): Promise<void> {
  await db
    .collection<{ _id: string }>(POSITIONS_COLLECTION)
    .updateOne(
      { _id: COMPLETE_MARK },
      { $set: { complete_at: new Date() } },
      { upsert: true, comment: FEED_COMMENT },
    );
}
