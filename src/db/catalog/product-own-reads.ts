import type { Collection } from 'mongodb';
import { walkInIdOrder } from '../id-order-walk';
import type { createPendingReads } from './product-pending-reads';
import { productFilter, type createProductPlanner, type ProductCriteria } from './product-plans';
import { walkMayFill, WALK_BUDGET, type SearchPlan } from './product-search';
import { ownKeyed, PROJECTION, raw, type KeysetWindow, type Raw } from './product-rows';

/**
 * The own-keyed rows (`_id` = id) of a page or a window: a walk of the primary key in id order
 * where it fills them, else the search's read through the projection (src/db/catalog/product-pending-reads.ts).
 */

export interface OwnReadOptions {
  stored: Collection;
  reads: object;
  planned: ReturnType<typeof createProductPlanner>['planned'];
  pendingReads: ReturnType<typeof createPendingReads>;
}

export function createOwnReads({ stored, reads, planned, pendingReads }: OwnReadOptions) {
  /**
   * A search's page by walking at most WALK_BUDGET products in id order (from `idRange`), or
   * null when they hold too few matches to fill it: then the index is cheaper.
   */
  async function walk(
    criteria: ProductCriteria,
    idRange: object | undefined,
    direction: 1 | -1,
    skip: number,
    limit: number,
    signal?: AbortSignal,
  ): Promise<Raw[] | null> {
    if (criteria.category !== undefined || skip + limit > WALK_BUDGET) return null;
    const rows = await walkInIdOrder(
      stored,
      {
        idRange,
        direction,
        budget: WALK_BUDGET,
        match: raw(productFilter(criteria)),
        skip,
        limit,
        projection: PROJECTION,
      },
      { ...reads, signal },
    );
    return rows.length === limit ? rows : null;
  }

  /**
   * The own-keyed rows (`_id` = id) of a page at offset `skip`, walking the primary key in id
   * order. Other writers' keys sort after every number, so they can only follow the own rows.
   */
  function ownPage(criteria: ProductCriteria, skip: number, limit: number, signal?: AbortSignal) {
    return planned(criteria, (searchPlan) => ownPageBy(searchPlan, criteria, skip, limit, signal));
  }

  async function ownPageBy(
    searchPlan: SearchPlan,
    criteria: ProductCriteria,
    skip: number,
    limit: number,
    signal?: AbortSignal,
  ) {
    if (walkMayFill(searchPlan, skip + limit)) {
      const walked = await walk(criteria, undefined, 1, skip, limit, signal);
      if (walked) return walked.filter(ownKeyed);
    }
    return (await pendingReads.page(criteria, searchPlan, skip, limit, signal)).filter(ownKeyed);
  }

  /**
   * The own-keyed rows of a window, walking the primary key. With other writers' keys on the
   * side the walk starts from, its open end is bounded by the numbers (a range on a number holds
   * numbers only): the walk then starts at the own keys instead of reading through theirs.
   */
  async function ownWindow(
    criteria: ProductCriteria,
    window: KeysetWindow,
    bracketed: boolean,
    signal?: AbortSignal,
  ): Promise<Raw[]> {
    const { limit } = window;
    const idRange: { $gt?: number; $lt?: number } = {};
    if (window.afterId !== undefined) idRange.$gt = window.afterId;
    if (window.beforeId !== undefined) idRange.$lt = window.beforeId;
    if (bracketed && window.descending) idRange.$lt ??= Infinity;
    if (bracketed && !window.descending) idRange.$gt ??= -Infinity;
    const bounded = Object.keys(idRange).length > 0;
    return planned(criteria, async (searchPlan) => {
      if (walkMayFill(searchPlan, limit)) {
        const walked = await walk(
          criteria,
          bounded ? idRange : undefined,
          window.descending ? -1 : 1,
          0,
          limit,
          signal,
        );
        if (walked) return walked.filter(ownKeyed).slice(0, window.limit);
      }
      const rows = await pendingReads.window(criteria, searchPlan, idRange, window.descending, limit, signal);
      return rows.filter(ownKeyed).slice(0, window.limit);
    });
  }

  return { page: ownPage, window: ownWindow };
}
