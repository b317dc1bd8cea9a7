import {
  MongoBulkWriteError,
  type AnyBulkWriteOperation,
  type Collection,
  type Db,
  type Document,
} from 'mongodb';
import { FEED_COMMENT, type FeedChange } from '../feed-types';
import { POSITIONS_COLLECTION } from '../feed/watermarks';
import { forEachIdBatch } from '../id-batches';
import { SEARCHABLE_FIELDS } from '../catalog/product-search';

/**
 * The products' before-images: one document per product `_id` holding the fields a product filter
 * reads, as the change feed last handed the product on (or, for products it never did, as the
 * backfill read them). A total counted while nothing was pending equals the same count over these,
 * so while writes are pending it is adjusted by them (src/db/catalog/total-adjust.ts) instead of counted
 * again. The products hold only their state now, and their grams are no such image (a superset
 * test of words, nothing of `category_key`, and other writers copy them with a document).
 */

export const SEARCH_STATE_COLLECTION = 'product_search_state';

/** Every field a product filter (src/db/catalog/product-plans.ts) reads. */
export const FILTERED_FIELDS = [...SEARCHABLE_FIELDS, 'category_key'] as const;

/** A product's filtered fields, as read for its image. */
const FILTERED_PROJECTION = Object.fromEntries(FILTERED_FIELDS.map((field) => [field, 1]));

/** The mark of a complete backfill, in `change_feed_positions` (never a followed collection's name). */
const BACKFILL_MARK = SEARCH_STATE_COLLECTION;

const DEFAULT_BATCH = 1_000;

/**
 * The filtered fields as stored, whatever their type (the same query must answer the same on
 * both), absent ones left out.
 */
export function stateOf(doc: Document): Document {
  const state: Document = {};
  for (const field of FILTERED_FIELDS) if (field in doc) state[field] = doc[field];
  return state;
}

/** When an image was written (this server's clock): src/db/catalog/total-adjust.ts trusts only older ones. */
export const IMAGED_AT = 'imaged_at';

/** `_id`s of any type as one key (1 and '1' differ). */
const idKey = (id: unknown) => `${typeof id}:${String(id)}`;

/**
 * The writes that make the before-images of `changes` their products as they are now (`current`,
 * read after the change was handed on): replaced, or deleted with the product. Not the documents
 * the feed handed on: every instance of a fleet writes these images, and one behind the others
 * would put back an earlier state over a later one (a writer's `updated_at` cannot order them:
 * its clock may be behind).
 */
export function stateWrites(
  changes: readonly FeedChange<Document>[],
  current: readonly Document[],
  imagedAt = new Date(),
): AnyBulkWriteOperation<Document>[] {
  const now = new Map(current.map((doc) => [idKey(doc._id), doc]));
  return changes.map(({ _id }) => {
    const doc = now.get(idKey(_id));
    return doc
      ? {
          replaceOne: {
            filter: { _id } as Document,
            replacement: { ...stateOf(doc), [IMAGED_AT]: imagedAt },
            upsert: true,
          },
        }
      : { deleteOne: { filter: { _id } as Document } };
  });
}

export async function writeStates(db: Db, changes: readonly FeedChange<Document>[]): Promise<void> {
  if (changes.length === 0) return;
  const current = await db
    .collection('products')
    .find({ _id: { $in: changes.map((change) => change._id) } } as Document, {
      projection: FILTERED_PROJECTION,
      comment: FEED_COMMENT,
    })
    .toArray();
  await db
    .collection(SEARCH_STATE_COLLECTION)
    .bulkWrite(stateWrites(changes, current), { comment: FEED_COMMENT });
}

/** Whether every product has had its before-image written (the backfill completed once). */
export async function statesComplete(db: Db): Promise<boolean> {
  const marks = db.collection<{ _id: string }>(POSITIONS_COLLECTION);
  return (await marks.findOne({ _id: BACKFILL_MARK }, { comment: FEED_COMMENT })) !== null;
}

/** Forgets the before-images (a reload of the catalogue: `npm run seed`). */
export async function dropStates(db: Db): Promise<void> {
  await db.collection<{ _id: string }>(POSITIONS_COLLECTION).deleteOne({ _id: BACKFILL_MARK });
  await db.collection(SEARCH_STATE_COLLECTION).drop();
}

/** Ends a walk early (the server is stopping). */
class StopWalk extends Error {}

/** Inserts those not there yet: what the feed wrote is newer than what the backfill read. */
async function insertAbsent(states: Collection<Document>, docs: Document[]): Promise<void> {
  try {
    await states.insertMany(docs, { ordered: false, comment: FEED_COMMENT });
  } catch (error) {
    const duplicates =
      error instanceof MongoBulkWriteError &&
      [error.writeErrors].flat().every((writeError) => writeError.code === 11000);
    if (!duplicates) throw error;
  }
}

/**
 * Writes the before-image of every product that has none, in `_id` order, then marks the backfill
 * complete; stops early (unmarked) when `signal` aborts. Never replaces one: the feed's is newer.
 */
export async function backfillStates(
  db: Db,
  { batchSize = DEFAULT_BATCH, signal }: { batchSize?: number; signal?: AbortSignal } = {},
): Promise<boolean> {
  const states = db.collection(SEARCH_STATE_COLLECTION);
  // A query per batch: DocumentDB expires a cursor 60 s after it was made (src/db/id-batches.ts).
  await forEachIdBatch(
    db.collection('products'),
    { projection: FILTERED_PROJECTION, batchSize, comment: FEED_COMMENT },
    async (batch) => {
      if (signal?.aborted) throw new StopWalk();
      await insertAbsent(states, batch);
    },
  ).catch((error: unknown) => {
    if (!(error instanceof StopWalk)) throw error;
  });
  if (signal?.aborted) return false;
  await db
    .collection<{ _id: string }>(POSITIONS_COLLECTION)
    .updateOne(
      { _id: BACKFILL_MARK },
      { $set: { complete_at: new Date() } },
      { upsert: true, comment: FEED_COMMENT },
    );
  return true;
}

/** Whether totals may be adjusted by the before-images: every product has one. */
export interface BeforeImages {
  ready(): boolean;
}

/**
 * The before-images of this server: ready at once where the backfill completed before, else
 * after the one it runs in the background (a failure is told and leaves totals counted as before).
 */
export async function keepBeforeImages(
  db: Db,
  onError: (error: unknown) => void,
): Promise<BeforeImages & { close(): Promise<void> }> {
  let ready = await statesComplete(db);
  const stop = new AbortController();
  const backfill = ready
    ? Promise.resolve()
    : backfillStates(db, { signal: stop.signal }).then(
        (complete) => void (ready = complete),
        (error: unknown) => void (stop.signal.aborted || onError(error)),
      );
  return {
    ready: () => ready,
    async close() {
      stop.abort();
      await backfill;
    },
  };
}
