import type { Db } from 'mongodb';
import { FEED_COMMENT } from '../feed-types';
import { POSITIONS_COLLECTION } from '../feed/watermarks';
import type { TotalCache } from '../catalog/total-cache';

/**
 * A mark that `npm run search:index` moves after each batch in which it wrote grams. Its writes of
 * the grams alone are not changes to a polling feed (no `updated_at`) nor to change streams (an
 * update of search fields alone is dropped), so without it a total a running server kept from the
 * old grams outlived the repair: a product renamed without a stamp and repaired was served by a
 * search whose `totalCount` stayed 0 until an unrelated write (issue 36, row 10). A server that
 * does not read the log reads the mark before it trusts a kept total (one lookup by `_id`, not
 * shared, so it is newer than the request), and drops every kept total when it moved. The log
 * needs none of this: it follows the renamed product itself, so its grams are current before any
 * kept total is read.
 */

/** In `change_feed_positions` (never a followed collection's name). */
const GRAMS_EPOCH_MARK = 'search_grams_epoch';

interface EpochDoc {
  _id: string;
  epoch: number;
  at: Date;
}

/** Moves the mark: every server drops its kept totals before it next serves one. */
export async function bumpGramsEpoch(db: Db): Promise<void> {
  await db
    .collection<EpochDoc>(POSITIONS_COLLECTION)
    .updateOne(
      { _id: GRAMS_EPOCH_MARK },
      { $inc: { epoch: 1 }, $set: { at: new Date() } },
      { upsert: true, comment: FEED_COMMENT },
    );
}

/**
 * Reads the mark before a kept total is used; drops `totals` when it moved since the last read.
 * Shared as the feed's check is (src/db/feed/fresh-check.ts): a request joins the read that starts
 * after it asked, never one already out, so it sees every move made before it asked.
 */
export function createGramsEpochCheck(db: Db, totals: TotalCache, reads: object) {
  const marks = db.collection<EpochDoc>(POSITIONS_COLLECTION);
  let seen: number | undefined;
  async function read(): Promise<void> {
    const mark = await marks.findOne(
      { _id: GRAMS_EPOCH_MARK },
      { projection: { epoch: 1 }, comment: FEED_COMMENT, ...reads },
    );
    const epoch = mark?.epoch ?? 0;
    // A later read may answer first: only a newer mark than any seen drops the totals.
    if (seen !== undefined && epoch > seen) totals.invalidate();
    seen = Math.max(seen ?? epoch, epoch);
  }
  let out: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  function check(): Promise<void> {
    if (!out) {
      const started = read().finally(() => {
        if (out === started) out = undefined;
      });
      out = started;
      return started;
    }
    next ??= out
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return check();
      });
    return next;
  }
  return check;
}
