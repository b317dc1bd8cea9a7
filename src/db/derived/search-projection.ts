import { BSON, type AnyBulkWriteOperation, type Collection, type Db, type Document } from 'mongodb';
import type { FeedChange } from '../feed-types';
import { FEED_COMMENT } from '../feed-types';
import { POSITIONS_COLLECTION } from '../feed/watermarks';
import { COMPLETE_MARK, SEARCH_PROJECTION_COLLECTION } from '../catalog/search-projection-mark';
import { searchableTextOf } from '../catalog/search-grams';
import { searchFields, SEARCHABLE_FIELDS } from '../catalog/product-search';
import { isDatabaseUnavailable } from '../mongo';

/**
 * The gateway's own copy of what a search reads of each product: its grams, and the fields a
 * search filter and its count test (the searched texts, `category_key`, and the two fields that
 * say whether a page can serve it), under the products' own names, so the same filter runs on
 * either collection. Keyed by the product's `_id` and kept from the change feed: the gateway
 * writes nothing into `products`, which other systems own (an owner's bulk update once
 * deadlocked against the grams the gateway wrote into its rows). A search through the grams
 * selects a page's `_id`s here, then fetches those products.
 */

/** The fields copied as stored, whatever their type: a filter must answer the same on both. */
const COPIED_FIELDS = [...SEARCHABLE_FIELDS, 'category_key'] as const;

/** Everything of a product its row is made from (a read of `products` for the sync). */
export const PROJECTED_SOURCE = Object.fromEntries([...COPIED_FIELDS, 'variant'].map((field) => [field, 1]));

/**
 * What of `value` a dotted `path` reaches, in its shape (arrays kept, as the database walks
 * them), nothing else: a filter on the path answers the same on the copy.
 */
function keepPath(value: unknown, path: readonly string[]): unknown {
  if (path.length === 0) return value;
  if (Array.isArray(value)) return value.map((item) => keepPath(item, path));
  if (value === null || typeof value !== 'object' || '_bsontype' in value) return null;
  const [head, ...rest] = path as [string, ...string[]];
  return head in value ? { [head]: keepPath((value as Document)[head], rest) } : {};
}

/** A product's copied fields: the searched texts, `category_key`, and the readable clauses' fields. */
function copiedFields(doc: Document): Document {
  const row: Document = { _id: doc._id };
  for (const field of COPIED_FIELDS) if (field in doc) row[field] = doc[field];
  if ('variant' in doc) row.variant = keepPath(doc.variant, ['price', 'amount']);
  return row;
}

/** A product's row: its copied fields and its grams. */
export function projectionRow(doc: Document): Document {
  return { ...copiedFields(doc), ...searchFields(searchableTextOf(doc)) };
}

/** A read through the projection met rows of products gone: read it again as a scan. */
export class StaleRowsError extends Error {}

const same = (a: Document, b: Document | undefined) =>
  b !== undefined && Buffer.from(BSON.serialize(a)).equals(BSON.serialize(b));

/** `_id`s of any type as one key (1 and '1' differ). */
export const idKey = (id: unknown) => `${typeof id}:${String(id)}`;

/**
 * The writes that make the rows of `changes` their products' last state: the last change of each
 * product wins (a batch may hold an insert and its update). A change that leaves every copied
 * field as it was writes nothing.
 */
export function projectionWrites(
  changes: readonly FeedChange<Document>[],
): AnyBulkWriteOperation<Document>[] {
  const last = new Map<string, FeedChange<Document>>();
  for (const change of changes) {
    const key = idKey(change._id);
    last.delete(key);
    last.set(key, change);
  }
  return [...last.values()].flatMap((change): AnyBulkWriteOperation<Document>[] => {
    const filter = { _id: change._id } as Document;
    if (change.document === null) return [{ deleteOne: { filter } }];
    // Nothing the row copies changed (a stock flag, a description): nothing to write.
    if (change.before && same(copiedFields(change.before), copiedFields(change.document))) return [];
    return [{ replaceOne: { filter, replacement: projectionRow(change.document), upsert: true } }];
  });
}

/**
 * Rows per write: a bulk update's run of 1,000 changes written at once took longer than the
 * connection's reply bound (MONGODB_TIMEOUT_MS + 1 s) at load 6, and the slot then replayed it.
 */
const WRITE_CHUNK = 200;

/** Told of a row the database refused (its product is then searched by the scan). */
export type OnRefused = (id: unknown, error: unknown) => void;

const idOfWrite = (write: AnyBulkWriteOperation<Document>): unknown =>
  ('replaceOne' in write
    ? write.replaceOne.filter
    : (write as { deleteOne: { filter: Document } }).deleteOne.filter
  )._id;

/**
 * A row the database will not take (a product too large for its row: its grams of a text of
 * megabytes) is written as a stale one instead (version 0): searches then scan, exact, until the
 * product changes or `npm run search:index` runs, and /metrics counts it. So one such product
 * never stops the feed (a failed batch is read again, for ever).
 */
async function writeOneByOne(
  rows: Collection<Document>,
  writes: readonly AnyBulkWriteOperation<Document>[],
  onRefused: OnRefused,
): Promise<void> {
  for (const write of writes) {
    try {
      await rows.bulkWrite([write], { comment: FEED_COMMENT });
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      const _id = idOfWrite(write);
      onRefused(_id, error);
      await rows.replaceOne(
        { _id } as Document,
        { _id, search_grams_version: 0 },
        { upsert: true, comment: FEED_COMMENT },
      );
    }
  }
}

export async function writeRows(
  rows: Collection<Document>,
  writes: readonly AnyBulkWriteOperation<Document>[],
  onRefused: OnRefused = () => undefined,
): Promise<void> {
  for (let start = 0; start < writes.length; start += WRITE_CHUNK) {
    const chunk = writes.slice(start, start + WRITE_CHUNK);
    try {
      await rows.bulkWrite(chunk, { ordered: false, comment: FEED_COMMENT });
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      await writeOneByOne(rows, chunk, onRefused);
    }
  }
}

export async function writeProjection(
  db: Db,
  changes: readonly FeedChange<Document>[],
  onRefused?: OnRefused,
): Promise<number> {
  const writes = projectionWrites(changes);
  await writeRows(db.collection(SEARCH_PROJECTION_COLLECTION), writes, onRefused);
  return writes.length;
}

/** The writes that make `rows` (read for these products) what `products` say now. */
export async function rowsToWrite(
  rows: Collection<Document>,
  products: readonly Document[],
  comment?: string,
): Promise<AnyBulkWriteOperation<Document>[]> {
  const stored = await rows.find({ _id: { $in: products.map((doc) => doc._id) } }, { comment }).toArray();
  const byId = new Map(stored.map((row) => [idKey(row._id), row]));
  return products.flatMap((doc) => {
    const row = projectionRow(doc);
    if (same(row, byId.get(idKey(doc._id)))) return [];
    return [{ replaceOne: { filter: { _id: doc._id }, replacement: row, upsert: true } }];
  });
}

/** The `_id`s among `ids` that no product has any more. */
export async function orphansAmong(
  products: Collection<Document>,
  ids: readonly unknown[],
  comment?: string,
): Promise<unknown[]> {
  const present = await products
    .find({ _id: { $in: [...ids] } } as Document, { projection: { _id: 1 }, comment })
    .toArray();
  const kept = new Set(present.map((doc) => idKey(doc._id)));
  return ids.filter((id) => !kept.has(idKey(id)));
}

/**
 * Forgets the projection (a reload of the catalogue: `npm run seed`): dropped with its indexes
 * where the caller builds them after its load, else emptied. The loader marks it complete again.
 */
export async function dropProjection(db: Db, { withIndexes = true } = {}): Promise<void> {
  await db.collection<{ _id: string }>(POSITIONS_COLLECTION).deleteOne({ _id: COMPLETE_MARK });
  const rows = db.collection(SEARCH_PROJECTION_COLLECTION);
  await (withIndexes ? rows.deleteMany({}) : rows.drop());
}

/** Rows for products the caller itself inserts (the seed): idempotent beside the feed's. */
export async function writeRowsOf(db: Db, docs: readonly Document[]): Promise<void> {
  if (docs.length === 0) return;
  await db.collection(SEARCH_PROJECTION_COLLECTION).bulkWrite(
    docs.map((doc) => ({
      replaceOne: { filter: { _id: doc._id }, replacement: projectionRow(doc), upsert: true },
    })),
    { ordered: false },
  );
}
