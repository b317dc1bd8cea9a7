import type { Collection, Document, Filter } from 'mongodb';
import type { ProductDoc } from '../documents';
import { WITHOUT_SEARCH_FIELDS, type SearchPlan } from './product-search';
import { idKey, StaleRowsError } from '../derived/search-projection';
import { raw, type Raw } from './product-rows';

/**
 * The sorted reads of a search by its plan: through the grams, the search projection
 * (src/db/derived/search-projection.ts) selects the `_id`s and the products are read by them;
 * otherwise the products themselves. Rows keep `_id`.
 */

/** `filter` without the products `exclude` names (`_id`s of any type). */
export function excluding(
  filter: Filter<Document>,
  exclude: readonly unknown[] | undefined,
): Filter<Document> {
  return exclude?.length ? ({ $and: [filter, { _id: { $nin: [...exclude] } }] } as Filter<Document>) : filter;
}

const isEmpty = (filter: object) => Object.keys(filter).length === 0;

export interface SortedReadOptions {
  stored: Collection;
  /** The search projection: what a read through the grams selects from. */
  index: Collection;
  reads: object;
  hintFor: (plan: SearchPlan) => string;
}

export function createSortedReads({ stored, index, reads, hintFor }: SortedReadOptions) {
  const sourceOf = (plan: SearchPlan) => (plan.kind === 'grams' ? index : stored);

  /**
   * The products of rows the projection selected, in their order: one read by `_id`. A row whose
   * product is gone (polling: a deletion its count of the collection has not noticed yet) makes
   * the read a scan (StaleRowsError): a page with a hole would shift every offset after it.
   */
  async function hydrated(rows: Raw[], plan: SearchPlan, signal?: AbortSignal): Promise<Raw[]> {
    return plan.kind === 'grams' ? fetched(rows, signal) : rows;
  }

  /** The products of rows of `_id`s, in their order (StaleRowsError where one is gone). */
  async function fetched(rows: Raw[], signal?: AbortSignal): Promise<Raw[]> {
    if (rows.length === 0) return rows;
    const found = await stored
      .find({ _id: { $in: rows.map((row) => row._id) } } as Filter<Document>, {
        projection: WITHOUT_SEARCH_FIELDS,
        ...reads,
        signal,
      })
      .toArray();
    if (found.length < rows.length) throw new StaleRowsError();
    const byId = new Map(found.map((row) => [idKey(row._id), row as Raw]));
    return rows.map((row) => byId.get(idKey(row._id))!);
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
  ): Promise<Raw[]> {
    const match = excluding(raw(filter), exclude);
    const rows = await sourceOf(plan)
      .aggregate<Raw>(
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

  /** Rows of `filter` within `idRange`, in `_id` order either way, at most `limit`. */
  async function windowRead(
    filter: Filter<ProductDoc>,
    readPlan: SearchPlan,
    {
      idRange,
      descending,
      limit,
    }: { idRange: { $gt?: number; $lt?: number }; descending: boolean; limit: number },
    signal?: AbortSignal,
  ): Promise<Raw[]> {
    const bounded = Object.keys(idRange).length > 0;
    const ranged = (filter: Filter<Document>) =>
      (!bounded
        ? filter
        : isEmpty(filter)
          ? { _id: idRange }
          : { $and: [filter, { _id: idRange }] }) as Filter<Document>;
    // Unfiltered, a window is a range of the primary key: the planner walks it unhinted.
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
    return hydrated(rows as Raw[], readPlan, signal);
  }

  return { sourceOf, sortedPage, windowRead, fetched };
}
