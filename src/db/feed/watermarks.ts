import type { Db } from 'mongodb';
import { FEED_COMMENT } from '../feed-types';

/**
 * Where a change feed resumes: one document per followed collection in `change_feed_positions`,
 * in the database it follows. There, not in Redis or a file, because it describes that data: it
 * survives a restart of every instance, a backup restores it with the data it belongs to, and a
 * new instance of the fleet starts where the others are. Written after a batch was handled, so a
 * crash re-reads (never skips) what was not; handling a change twice is harmless for every
 * listener (grams and purges are idempotent). Instances write it in turn; a slightly older value
 * written last only makes the next start re-read a little.
 */

export const POSITIONS_COLLECTION = 'change_feed_positions';

export interface FeedPosition {
  /** Polling: the `updated_at` of the last document handled. */
  updated_at?: Date;
  /** Polling: the `_id`s handled with exactly that `updated_at`. */
  ids_at?: unknown[];
  /** Polling: the same for `updated_at` written as text (src/db/feed/range.ts); `''` before any. */
  text_updated_at?: string;
  text_ids_at?: unknown[];
  /** Change streams: the resume token after the last change handled. */
  resume_token?: unknown;
}

interface PositionDoc extends FeedPosition {
  _id: string;
}

export interface WatermarkStore {
  load(): Promise<FeedPosition | undefined>;
  save(position: FeedPosition): Promise<void>;
}

export function createWatermarkStore(db: Db, collection: string, maxTimeMS?: number): WatermarkStore {
  const positions = db.collection<PositionDoc>(POSITIONS_COLLECTION);
  return {
    async load() {
      const found = await positions.findOne({ _id: collection }, { comment: FEED_COMMENT, maxTimeMS });
      if (!found) return undefined;
      const { _id, ...position } = found;
      return position;
    },
    async save(position) {
      await positions.replaceOne({ _id: collection }, position, { upsert: true, comment: FEED_COMMENT });
    },
  };
}
