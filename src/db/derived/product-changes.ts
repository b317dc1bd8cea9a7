import { BSON, type Document } from 'mongodb';
import type { FeedBatch, FeedChange } from '../feed-types';
import { READABLE_PRODUCT } from '../catalog/readable-filter';

/**
 * What a product change can touch. A filter or a count reads only these fields of a product (its
 * keys, the searched texts, the category and the brand, and whether its name and price can be
 * read): a change that leaves them all as they were (a price, a stock flag, a description) moves
 * the product into or out of no list, so no total changes and only the cached answers that hold
 * the product do. Only a source that knows
 * the document before the change (the log) can tell; without it every change moves lists. Where
 * the feed reads the log, totals and caches follow each change more closely (src/db/derived/total-moves.ts,
 * src/db/derived/cache-scope.ts); this decides for the other sources.
 */
const LISTED_FIELDS = [
  '_id',
  'id',
  'name',
  'short_description',
  'brand_name',
  'brand_id',
  'category_name',
  'category_key',
  'tags',
] as const;

const same = (a: unknown, b: unknown) =>
  Buffer.from(BSON.serialize({ value: a })).equals(BSON.serialize({ value: b }));

/** The `$type` alias of a value as the driver decoded it (numbers: both aliases a set lists together). */
function typeAlias(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return 'double';
  const bsonType = (value as { _bsontype?: string } | null)?._bsontype;
  return bsonType === 'Decimal128' ? 'decimal' : bsonType === 'Long' ? 'long' : 'other';
}

const atPath = (doc: Document, path: string): unknown =>
  path.split('.').reduce<unknown>((value, key) => (value as Document | undefined)?.[key], doc);

/** Counts also leave out what no page can serve (src/db/catalog/readable-filter.ts): whether each clause holds. */
const readableChecks = Object.entries(READABLE_PRODUCT as Record<string, { $type: string[] }>).map(
  ([path, { $type }]) =>
    (doc: Document) =>
      $type.includes(typeAlias(atPath(doc, path))),
);

function keepsItsLists(change: FeedChange<Document>): boolean {
  const { before, document: after } = change;
  return (
    before !== undefined &&
    after !== null &&
    LISTED_FIELDS.every((field) => same(before[field], after[field])) &&
    readableChecks.every((readable) => readable(before) === readable(after))
  );
}

/** Whether a batch may move a product into or out of a list: then kept totals and cached lists go. */
export function movesLists(batch: FeedBatch<Document>): boolean {
  return batch.unseenChanges === true || !batch.changes.every(keepsItsLists);
}
