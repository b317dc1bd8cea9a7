import type { Collection, Filter } from 'mongodb';
import type { ReadLimits } from '../guards/deadline';
import type { ProductDoc } from '../documents';
import { createIndexKeeper, type IndexEvent } from '../guards/index-keeper';
import { StaleRowsError } from '../derived/search-projection';
import { PRIMARY_KEY } from '../mongo';
import { READABLE_PRODUCT } from './readable-filter';
import type { ChangeFeed } from '../change-feed';
import {
  createSearchPlanner,
  SEARCH_GRAMS_INDEX,
  searchClauses,
  type Pending,
  type SearchPlan,
  type SearchScanReason,
} from './product-search';

/** What a product read selects, and how: the criteria, their filter, the plan and its index. */

export interface ProductCriteria {
  /** Every word must occur, case-insensitively, in one of the searchable fields. */
  words: readonly string[];
  /** Matches category_name exactly, case-insensitively. */
  category?: string;
}

export function categoryKey(category: string): string {
  return category.toLowerCase();
}

export const SCAN: SearchPlan = { kind: 'scan' };

/**
 * User text is escaped, so it is matched literally and can never act as a pattern or operator.
 * The plan only adds the grams that let an index pick candidates (src/db/catalog/product-search.ts).
 */
export function productFilter(criteria: ProductCriteria, plan: SearchPlan = SCAN): Filter<ProductDoc> {
  return withCategory(criteria, searchClauses(criteria.words, plan));
}

/** What a total counts: the page's filter, of products a page can serve (src/db/catalog/readable-filter.ts). */
export function countFilter(criteria: ProductCriteria, plan: SearchPlan): Filter<ProductDoc> {
  // Last, so the index clauses lead: src/db/catalog/readable-filter.ts.
  return withCategory(criteria, [...searchClauses(criteria.words, plan), READABLE_PRODUCT]);
}

function withCategory(criteria: ProductCriteria, clauses: Filter<ProductDoc>[]): Filter<ProductDoc> {
  if (criteria.category !== undefined) clauses.unshift({ category_key: categoryKey(criteria.category) });
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as Filter<ProductDoc>;
  return { $and: clauses };
}

export interface ProductPlannerOptions extends ReadLimits {
  /** Told when the gram index is found missing, and when creating it again ends. */
  onIndexEvent?: (event: IndexEvent) => void;
  /**
   * Polling: products written since the feed's position may carry stale grams, and plans say since
   * when. The log: once the feed has handed on everything committed before the request, plans name
   * the products whose rows its holder has not written yet (else the search scans: exact, slower).
   */
  feed?: Pick<ChangeFeed<unknown>, 'handledBefore' | 'underived' | 'mode'>;
  /** Told why a search scans instead of reading the grams. */
  onSearchScan?: (reason: SearchScanReason) => void;
}

/**
 * Plans over the search projection `rows` (src/db/derived/search-projection.ts); `complete` says whether
 * every product has its row (until a first sync has run, searches scan).
 */
export function createProductPlanner(
  rows: Collection<ProductDoc>,
  complete: () => Promise<boolean>,
  { maxTimeMS, onIndexEvent, feed, onSearchScan }: ProductPlannerOptions,
) {
  const planSearch = createSearchPlanner(rows, maxTimeMS ? { maxTimeMS } : {}, complete);
  const gramIndex = createIndexKeeper(rows, SEARCH_GRAMS_INDEX, { onEvent: onIndexEvent });
  /** The products whose rows may be stale; 'unknown' when the log cannot tell (the search scans). */
  async function pendingOf(): Promise<Pending | undefined | 'unknown'> {
    if (feed?.mode !== 'log') {
      const since = feed?.handledBefore();
      return since && { since };
    }
    const underived = await feed.underived?.();
    if (underived === undefined) return 'unknown';
    return underived.ids.length > 0 ? underived : undefined;
  }
  async function plan(criteria: ProductCriteria): Promise<SearchPlan> {
    if (criteria.words.length === 0 || !gramIndex.usable()) return SCAN;
    const pending = await pendingOf();
    if (pending !== 'unknown') return planSearch(criteria.words, pending, onSearchScan);
    onSearchScan?.('feed_behind');
    return SCAN;
  }
  return {
    plan,
    /**
     * Every page names its index: the gram index for a search read through the grams (PostgreSQL
     * estimates `$all` far too high and would walk the primary key testing every row), the
     * primary key otherwise.
     */
    hintFor: (searchPlan: SearchPlan) =>
      searchPlan.kind === 'grams' ? SEARCH_GRAMS_INDEX.name : PRIMARY_KEY,
    /** A read by its plan; one that finds the gram index missing is read again as a scan. */
    async planned<T>(criteria: ProductCriteria, read: (searchPlan: SearchPlan) => Promise<T>): Promise<T> {
      const searchPlan = await plan(criteria);
      if (searchPlan.kind !== 'grams') return read(searchPlan);
      return gramIndex.readWith(
        () =>
          read(searchPlan).catch((error: unknown) => {
            if (error instanceof StaleRowsError) return read(SCAN);
            throw error;
          }),
        () => read(SCAN),
      );
    },
  };
}
