import type { Collection, Document, Filter } from 'mongodb';
import type { ProductDoc } from '../documents';
import type { HandledBefore } from '../feed-types';
import { UPDATED_AT_INDEX } from '../mongo';
import { productFilter, SCAN, type ProductCriteria } from './product-plans';
import { WITHOUT_SEARCH_FIELDS, writtenSince, type SearchPlan } from './product-search';
import { idKey, StaleRowsError } from '../derived/search-projection';
import { compareIds, gramWindow, MAX_PENDING, mergeById, offsetPage, tailPage } from './search-pending';

/**
 * Reads of a search through the grams: the search projection (src/db/derived/search-projection.ts)
 * selects the page's `_id`s, and the products are read by them. Polling: products written moments
 * ago may have stale rows (src/db/catalog/search-pending.ts), so they are matched by the regexes alone
 * on the products, the rest through the projection with the pending ones left out, merged in
 * `_id` order. Rows keep `_id`.
 */

interface Row {
  _id?: unknown;
  [field: string]: unknown;
}

const raw = (filter: Filter<ProductDoc>) => filter as Filter<Document>;

/** `filter` without the products `exclude` names (`_id`s of any type). */
function excluding(filter: Filter<Document>, exclude: readonly unknown[] | undefined): Filter<Document> {
  return exclude?.length ? ({ $and: [filter, { _id: { $nin: [...exclude] } }] } as Filter<Document>) : filter;
}

const isEmpty = (filter: object) => Object.keys(filter).length === 0;

export interface PendingReadOptions {
  stored: Collection;
  /** The search projection (src/db/derived/search-projection.ts): what a read through the grams selects from. */
  index: Collection;
  reads: object;
  hintFor: (plan: SearchPlan) => string;
}

export function createPendingReads({ stored, index, reads, hintFor }: PendingReadOptions) {
  const sourceOf = (plan: SearchPlan) => (plan.kind === 'grams' ? index : stored);

  /**
   * The products of rows the projection selected, in their order: one read by `_id`. A row whose
   * product is gone (polling: a deletion its count of the collection has not noticed yet) makes
   * the read a scan (StaleRowsError): a page with a hole would shift every offset after it.
   */
  async function hydrated(rows: Row[], plan: SearchPlan, signal?: AbortSignal): Promise<Row[]> {
    if (plan.kind !== 'grams' || rows.length === 0) return rows;
    const found = await stored
      .find({ _id: { $in: rows.map((row) => row._id) } } as Filter<Document>, {
        projection: WITHOUT_SEARCH_FIELDS,
        ...reads,
        signal,
      })
      .toArray();
    if (found.length < rows.length) throw new StaleRowsError();
    const byId = new Map(found.map((row) => [idKey(row._id), row as Row]));
    return rows.map((row) => byId.get(idKey(row._id))!);
  }

  /**
   * Products written since `since` (polling: their rows in the search projection may be stale):
   * all their `_id`s, left out of every read of the projection, and the search's matches among
   * them by the regexes alone, in `_id` order; null past MAX_PENDING (then the search scans).
   */
  async function pendingOf(
    criteria: ProductCriteria,
    since: HandledBefore,
    signal?: AbortSignal,
  ): Promise<{ ids: unknown[]; matches: Row[] } | null> {
    const written = (filter: Filter<Document>, projection: object) =>
      stored
        .find(filter, { projection, hint: UPDATED_AT_INDEX.name, ...reads, signal })
        .sort({ _id: 1 })
        .limit(MAX_PENDING + 1)
        .batchSize(MAX_PENDING + 1)
        .toArray();
    const [all, matches] = await Promise.all([
      written(raw(writtenSince(since)), { _id: 1 }),
      written(raw({ $and: [productFilter(criteria), writtenSince(since)] }), WITHOUT_SEARCH_FIELDS),
    ]);
    if (all.length > MAX_PENDING) return null;
    return { ids: all.map((row) => row._id), matches: matches as Row[] };
  }

  /**
   * Rows of `filter` minus `exclude` in `_id` order, as offset pages read them: an aggregation, not
   * find (find evaluates its projection on every row it skips), hinted to walk the primary key in
   * page order (left alone, the planner may read a whole category and sort it, or sort a scan for
   * a deep page). The unfiltered first page goes unhinted: the planner walks the primary key for
   * it anyway, and on DocumentDB a hint costs PostgreSQL ~0.2 ms of CPU per read (issue 29).
   */
  async function sortedPage(
    filter: Filter<ProductDoc>,
    plan: SearchPlan,
    {
      skip,
      limit,
      exclude,
      direction = 1,
    }: { skip: number; limit: number; exclude?: unknown[]; direction?: 1 | -1 },
    signal?: AbortSignal,
  ): Promise<Row[]> {
    const match = excluding(raw(filter), exclude);
    const rows = await sourceOf(plan)
      .aggregate<Row>(
        [
          { $match: match },
          { $sort: { _id: direction } },
          ...(skip > 0 ? [{ $skip: skip }] : []),
          { $limit: limit },
          { $project: plan.kind === 'grams' ? { _id: 1 } : WITHOUT_SEARCH_FIELDS },
        ],
        { ...reads, signal, ...(skip === 0 && isEmpty(match) ? {} : { hint: hintFor(plan) }) },
      )
      .toArray();
    return hydrated(rows, plan, signal);
  }

  return {
    sortedPage,

    /** An offset page of a search: the projection's rows, with the pending products' own state merged in. */
    async page(
      criteria: ProductCriteria,
      plan: SearchPlan,
      skip: number,
      limit: number,
      signal?: AbortSignal,
    ): Promise<Row[]> {
      const filter = productFilter(criteria, plan);
      const since = plan.kind === 'grams' ? plan.pendingSince : undefined;
      if (!since) return sortedPage(filter, plan, { skip, limit }, signal);
      const pending = await pendingOf(criteria, since, signal);
      if (pending === null) return sortedPage(productFilter(criteria), SCAN, { skip, limit }, signal);
      const { ids: exclude, matches } = pending;
      // A first page's rows are among the first `limit` of each read (a row in both is kept once).
      if (skip === 0 || matches.length === 0) {
        const rows = await sortedPage(filter, plan, { skip, limit, exclude }, signal);
        return mergeById(rows, skip === 0 ? matches : []).slice(0, limit);
      }
      // A later page shifts by the pending matches before it.
      const window = gramWindow(skip, limit, matches.length);
      const rows = await sortedPage(filter, plan, { ...window, exclude }, signal);
      const page = offsetPage(rows, window.skip, matches, skip, limit);
      if (page) return page;
      const [tail, total] = await Promise.all([
        sortedPage(filter, plan, { skip: 0, limit: matches.length, exclude, direction: -1 }, signal),
        sourceOf(plan).countDocuments(excluding(raw(filter), exclude), { ...reads, signal }),
      ]);
      return tailPage(tail.reverse(), total, matches, skip, limit);
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
      const bounded = Object.keys(idRange).length > 0;
      const ranged = (filter: Filter<Document>) =>
        (!bounded
          ? filter
          : isEmpty(filter)
            ? { _id: idRange }
            : { $and: [filter, { _id: idRange }] }) as Filter<Document>;
      // Unfiltered, a window is a range of the primary key: the planner walks it unhinted.
      const read = async (filter: Filter<ProductDoc>, readPlan: SearchPlan) => {
        const rows = await sourceOf(readPlan)
          .find(ranged(raw(filter)), {
            projection: readPlan.kind === 'grams' ? { _id: 1 } : WITHOUT_SEARCH_FIELDS,
            ...(isEmpty(filter) ? {} : { hint: hintFor(readPlan) }),
            ...reads,
            signal,
          })
          .sort({ _id: descending ? -1 : 1 })
          .limit(limit)
          // One batch for the whole window: a 101-row window (first: 100 plus the look-ahead row)
          // would fill FerretDB's default first batch exactly and cost a killCursors round trip.
          .batchSize(limit)
          .toArray();
        return hydrated(rows as Row[], readPlan, signal);
      };
      const since = plan.kind === 'grams' ? plan.pendingSince : undefined;
      if (!since) return read(productFilter(criteria, plan), plan);
      const pending = await pendingOf(criteria, since, signal);
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
      return merged.slice(0, limit);
    },
  };
}
