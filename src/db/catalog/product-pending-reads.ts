import type { Document, Filter } from 'mongodb';
import type { ProductDoc } from '../documents';
import { UPDATED_AT_INDEX } from '../mongo';
import type { createPendingMatches } from './pending-matches';
import { totalKey } from './kept-count';
import { productFilter, SCAN, type ProductCriteria } from './product-plans';
import { writtenSince, type Pending, type SearchPlan } from './product-search';
import { createSortedReads, excluding, type SortedReadOptions } from './product-sorted-reads';
import { raw, type Raw } from './product-rows';
import { compareIds, gramWindow, MAX_PENDING, mergeById, offsetPage, tailPage } from './search-pending';

/**
 * A search's pages and windows by its plan (src/db/catalog/product-sorted-reads.ts). Products
 * written moments ago may have stale rows (src/db/catalog/search-pending.ts), so they are matched
 * by the regexes alone on the products, the rest through the projection with the pending ones left
 * out, merged in `_id` order. Rows keep `_id`.
 */

type Row = Raw;

export interface PendingReadOptions extends SortedReadOptions {
  pendingMatches: ReturnType<typeof createPendingMatches>;
}

export function createPendingReads(options: PendingReadOptions) {
  const { stored, reads } = options;
  const { sourceOf, sortedPage, windowRead, fetched } = createSortedReads(options);

  /**
   * The pending products (src/db/catalog/product-search.ts, `Pending`): all their `_id`s, left out
   * of every read of the projection, and the search's matches among them by the regexes alone, in
   * `_id` order, as `_id`s (a page fetches its own); null past the bound (then the search scans).
   */
  async function pendingOf(
    criteria: ProductCriteria,
    pending: Pending,
    signal?: AbortSignal,
  ): Promise<{ ids: unknown[]; matches: Row[] } | null> {
    if ('ids' in pending) {
      const matches = await options.pendingMatches(
        `list ${totalKey(criteria)}`,
        raw(productFilter(criteria)),
        pending,
      );
      return { ids: pending.ids, matches };
    }
    const written = (filter: Filter<Document>) =>
      stored
        .find(filter, { projection: { _id: 1 }, hint: UPDATED_AT_INDEX.name, ...reads, signal })
        .sort({ _id: 1 })
        .limit(MAX_PENDING + 1)
        .batchSize(MAX_PENDING + 1)
        .toArray();
    const [all, matches] = await Promise.all([
      written(raw(writtenSince(pending.since))),
      written(raw({ $and: [productFilter(criteria), writtenSince(pending.since)] })),
    ]);
    if (all.length > MAX_PENDING) return null;
    return { ids: all.map((row) => row._id), matches: matches as Row[] };
  }

  /** The page with the pending matches it holds (`_id`s only) fetched: one read by `_id`. */
  async function filled(page: Row[], matches: readonly Row[], signal?: AbortSignal): Promise<Row[]> {
    const bare = new Set(matches);
    const products = await fetched(
      page.filter((row) => bare.has(row)),
      signal,
    );
    let at = 0;
    return page.map((row) => (bare.has(row) ? products[at++]! : row));
  }

  return {
    /** An offset page of a search: the projection's rows, with the pending products' own state merged in. */
    async page(
      criteria: ProductCriteria,
      plan: SearchPlan,
      skip: number,
      limit: number,
      signal?: AbortSignal,
    ): Promise<Row[]> {
      const filter = productFilter(criteria, plan);
      const stale = plan.kind === 'grams' ? plan.pending : undefined;
      if (!stale) return sortedPage(filter, plan, { skip, limit }, signal);
      const pending = await pendingOf(criteria, stale, signal);
      if (pending === null) return sortedPage(productFilter(criteria), SCAN, { skip, limit }, signal);
      const { ids: exclude, matches } = pending;
      // A first page's rows are among the first `limit` of each read (a row in both is kept once).
      if (skip === 0 || matches.length === 0) {
        const rows = await sortedPage(filter, plan, { skip, limit, exclude }, signal);
        return filled(mergeById(rows, skip === 0 ? matches : []).slice(0, limit), matches, signal);
      }
      // A later page shifts by the pending matches before it.
      const window = gramWindow(skip, limit, matches.length);
      const rows = await sortedPage(filter, plan, { ...window, exclude }, signal);
      const page = offsetPage(rows, window.skip, matches, skip, limit);
      if (page) return filled(page, matches, signal);
      const [tail, total] = await Promise.all([
        sortedPage(filter, plan, { skip: 0, limit: matches.length, exclude, direction: -1 }, signal),
        sourceOf(plan).countDocuments(excluding(raw(filter), exclude), { ...reads, signal }),
      ]);
      return filled(tailPage(tail.reverse(), total, matches, skip, limit), matches, signal);
    },

    /** A keyset window of a search: its first rows of the union are among the first `limit` of each. */
    async window(
      criteria: ProductCriteria,
      plan: SearchPlan,
      idRange: { $gt?: number; $lt?: number },
      descending: boolean,
      limit: number,
      signal?: AbortSignal,
    ): Promise<Row[]> {
      const read = (filter: Filter<ProductDoc>, readPlan: SearchPlan) =>
        windowRead(filter, readPlan, { idRange, descending, limit }, signal);
      const stale = plan.kind === 'grams' ? plan.pending : undefined;
      if (!stale) return read(productFilter(criteria, plan), plan);
      const pending = await pendingOf(criteria, stale, signal);
      if (pending === null) return read(productFilter(criteria), SCAN);
      const rows = await read(
        excluding(raw(productFilter(criteria, plan)), pending.ids) as Filter<ProductDoc>,
        plan,
      );
      const inRange = pending.matches.filter(
        (row) =>
          (idRange.$gt === undefined || compareIds(row._id, idRange.$gt) > 0) &&
          (idRange.$lt === undefined || compareIds(row._id, idRange.$lt) < 0),
      );
      const merged = descending
        ? mergeById([...rows].reverse(), inRange).reverse()
        : mergeById(rows, inRange);
      return filled(merged.slice(0, limit), inRange, signal);
    },
  };
}
