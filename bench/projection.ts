import type { Db, Document } from 'mongodb';
import { SEARCH_GRAMS_VERSION, searchableTextOf, searchTextHash } from '../src/db/catalog/search-grams';
import { SEARCH_PROJECTION_COLLECTION } from '../src/db/catalog/search-projection-mark';

/** The `_id`s of `docs` whose rows in the search projection hold grams of their text now. */
export async function currentRows(db: Db, docs: readonly Document[]): Promise<Set<unknown>> {
  const rows = await db
    .collection(SEARCH_PROJECTION_COLLECTION)
    .find({ _id: { $in: docs.map((doc) => doc._id) } } as Document)
    .toArray();
  const hashes = new Map(
    rows
      .filter((row) => row.search_grams_version === SEARCH_GRAMS_VERSION)
      .map((row) => [row._id, row.search_text_hash]),
  );
  return new Set(
    docs.filter((doc) => hashes.get(doc._id) === searchTextHash(searchableTextOf(doc))).map((doc) => doc._id),
  );
}
