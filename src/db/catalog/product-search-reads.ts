import type { Collection, Db } from 'mongodb';
import type { ProductDoc } from '../documents';
import { createPendingMatches } from './pending-matches';
import { createCounter } from './product-counts';
import { createPendingReads } from './product-pending-reads';
import { createProductPlanner, type ProductPlannerOptions } from './product-plans';
import { projectionComplete, SEARCH_PROJECTION_COLLECTION } from './search-projection-mark';

/**
 * What a search reads through: its plan over the gateway's search projection, the pages and
 * counts by that plan, and the matches among the products whose rows may be stale (shared by the
 * pages and the counts, so a filter's are read once).
 */
export function createSearchReads(db: Db, stored: Collection, reads: object, options: ProductPlannerOptions) {
  /** The gateway's copy of what a search reads: a read through the grams selects from it. */
  const index = db.collection(SEARCH_PROJECTION_COLLECTION);
  const { plan, planned, hintFor } = createProductPlanner(
    db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION),
    () => projectionComplete(db, reads),
    options,
  );
  const pendingMatches = createPendingMatches(stored, reads);
  return {
    plan,
    planned,
    pendingReads: createPendingReads({ stored, index, reads, hintFor, pendingMatches }),
    countMatches: createCounter(stored, index, reads, pendingMatches),
  };
}
