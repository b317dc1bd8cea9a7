import type { Db, Document } from 'mongodb';
import type { ChangeFeed } from '../change-feed';
import { writeProjection, type OnRefused } from './search-projection';
import { writeStates } from './search-state';
import { syncSearchProjection } from './search-backfill';

/**
 * Keeps the search projection (src/db/derived/search-projection.ts) current as the feed reports products
 * (once per change for a fleet, where the feed reads the log), and, where polling needs them,
 * the before-images (src/db/derived/search-state.ts). A failed write fails the batch, which the feed
 * then reads again: neither is left behind silently. A batch of unseen changes (polling's count
 * of the collection moved: an insert without a date in `updated_at`, a deletion) is answered by
 * a sync of the whole projection, in the background.
 */
export function followSearchGrams(
  feed: ChangeFeed<Document>,
  db: Db,
  {
    beforeImages,
    onError,
    onRefused,
  }: { beforeImages: boolean; onError: (error: unknown) => void; onRefused: OnRefused },
): () => void {
  let syncing: Promise<unknown> | undefined;
  return feed.subscribeDerived(async ({ changes, unseenChanges }) => {
    if (unseenChanges && feed.mode !== 'log')
      syncing ??= syncSearchProjection(db, { onRefused })
        .catch(onError)
        .finally(() => (syncing = undefined));
    await Promise.all([writeProjection(db, changes, onRefused), beforeImages && writeStates(db, changes)]);
  });
}
