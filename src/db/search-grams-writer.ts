import type { AnyBulkWriteOperation, Collection, Db, Document } from 'mongodb';
import { SEARCH_GRAMS_VERSION, searchTextHash, type SearchableText } from './search-grams';
import type { ChangeFeed } from './change-feed';
import { FEED_COMMENT } from './feed-types';
import { searchFields } from './product-search';
import { writeStates } from './search-state';

/**
 * The only writer of search grams: for each product it is given, current grams when the stored
 * ones were not made from its text now (missing, copied from another product, left behind by
 * another system's edit, or made by older rules). Only the search fields are set: `updated_at`
 * stays as the product's writer left it, so the change feed does not see the gateway's own write
 * as a change (a change stream's update event of search fields alone is dropped by the feed).
 */

/** The fields the grams are made from, and what tells whether the stored ones are current. */
export const GRAM_SOURCE_FIELDS = {
  name: 1,
  short_description: 1,
  brand_name: 1,
  category_name: 1,
  tags: 1,
  search_grams_version: 1,
  search_text_hash: 1,
} as const;

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

/** The writes that make the grams of `docs` current; none for those whose grams already are. */
export function gramWrites(docs: readonly Document[]): AnyBulkWriteOperation<Document>[] {
  return docs.flatMap((doc) => {
    const text = searchableTextOf(doc);
    if (doc.search_grams_version === SEARCH_GRAMS_VERSION && doc.search_text_hash === searchTextHash(text))
      return [];
    return [{ updateOne: { filter: { _id: doc._id }, update: { $set: searchFields(text) } } }];
  });
}

/** Writes what `gramWrites` finds; returns how many products got new grams. */
export async function writeGrams(products: Collection<Document>, docs: readonly Document[]): Promise<number> {
  const writes = gramWrites(docs);
  if (writes.length > 0) await products.bulkWrite(writes, { ordered: false, comment: FEED_COMMENT });
  return writes.length;
}

/**
 * Keeps the grams current as the feed reports products (once per change for a fleet, where the
 * feed reads the log), and, where polling needs them, their before-images (src/db/search-state.ts;
 * deleted with a deleted product). A failed write fails
 * the batch, which the feed then reads again: neither is left behind silently.
 */
export function followSearchGrams(
  feed: ChangeFeed<Document>,
  db: Db,
  { beforeImages }: { beforeImages: boolean },
): () => void {
  const products = db.collection('products');
  return feed.subscribeDerived(async ({ changes }) => {
    const present = changes.flatMap((change) => (change.document ? [change.document] : []));
    await Promise.all([writeGrams(products, present), beforeImages && writeStates(db, changes)]);
  });
}
