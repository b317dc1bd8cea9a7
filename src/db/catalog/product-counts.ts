import type { Collection, Document, Filter } from 'mongodb';
import type { ProductDoc } from '../documents';
import { UPDATED_AT_INDEX } from '../mongo';
import { countFilter, SCAN, type ProductCriteria } from './product-plans';
import { writtenSince, type Pending, type SearchPlan } from './product-search';
import { MAX_PENDING } from './search-pending';
import type { createPendingMatches } from './pending-matches';
import { totalKey } from './kept-count';

/**
 * A filter's exact count by its plan: through the grams, on the search projection
 * (src/db/derived/search-projection.ts), else on the products. While some products may have rows
 * not yet written (the plan's `pending`), those are counted on the products and left out of the
 * projection's count; past MAX_PENDING written since the feed's position (polling) the count scans.
 */
export function createCounter(
  stored: Collection,
  index: Collection,
  reads: object,
  pendingMatches: ReturnType<typeof createPendingMatches>,
) {
  const count = (source: Collection, filter: Filter<ProductDoc>, signal?: AbortSignal) =>
    source.countDocuments(filter as Filter<Document>, { ...reads, signal });

  /** The pending products' `_id`s; null past MAX_PENDING of those written since (polling). */
  async function pendingIds(pending: Pending, signal?: AbortSignal): Promise<unknown[] | null> {
    if ('ids' in pending) return [...pending.ids];
    const written = await stored
      .find(writtenSince(pending.since) as Filter<Document>, {
        projection: { _id: 1 },
        hint: UPDATED_AT_INDEX.name,
        ...reads,
        signal,
      })
      .limit(MAX_PENDING + 1)
      .toArray();
    return written.length > MAX_PENDING ? null : written.map((row) => row._id);
  }

  return async function countMatches(
    criteria: ProductCriteria,
    plan: SearchPlan,
    signal?: AbortSignal,
  ): Promise<number> {
    if (plan.kind !== 'grams') return count(stored, countFilter(criteria, plan), signal);
    const { pending, ...settled } = plan;
    if (!pending) return count(index, countFilter(criteria, plan), signal);
    const ids = await pendingIds(pending, signal);
    if (ids === null) return count(stored, countFilter(criteria, SCAN), signal);
    const written = (): Promise<number> =>
      ids.length === 0
        ? Promise.resolve(0)
        : 'ids' in pending
          ? pendingMatches(
              `count ${totalKey(criteria)}`,
              countFilter(criteria, SCAN) as Filter<Document>,
              pending,
            ).then((rows) => rows.length)
          : count(
              stored,
              { $and: [countFilter(criteria, SCAN), { _id: { $in: ids } }] } as Filter<ProductDoc>,
              signal,
            );
    const [others, matching] = await Promise.all([
      count(
        index,
        { $and: [countFilter(criteria, settled), { _id: { $nin: ids } }] } as Filter<ProductDoc>,
        signal,
      ),
      written(),
    ]);
    return others + matching;
  };
}
