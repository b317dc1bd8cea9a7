import type { Collection, Document, Filter } from 'mongodb';
import type { ProductDoc } from './documents';
import type { HandledBefore } from './feed-types';
import { UPDATED_AT_INDEX } from './mongo';
import { productFilter, SCAN, type ProductCriteria } from './product-plans';
import { WITHOUT_SEARCH_FIELDS, writtenSince, type SearchPlan } from './product-search';
import { compareIds, gramWindow, MAX_PENDING, mergeById, offsetPage, tailPage } from './search-pending';

/**
 * Reads of a search through the grams while products written moments ago may carry stale grams
 * (src/db/search-pending.ts): the pending products are matched by the regexes alone, the rest
 * through the grams with the pending ones left out, merged in `_id` order. Rows keep `_id`.
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
  reads: object;
  hintFor: (plan: SearchPlan) => string;
}

export function createPendingReads({ stored, reads, hintFor }: PendingReadOptions) {
  /**
   * The search's matches among products written since `since`, by the regexes alone, in `_id`
   * order; null when there are more than MAX_PENDING (then the search reads as a scan).
   */
  async function pendingMatches(criteria: ProductCriteria, since: HandledBefore, signal?: AbortSignal) {
    const rows = await stored
      .find(raw({ $and: [productFilter(criteria), writtenSince(since)] }), {
        projection: WITHOUT_SEARCH_FIELDS,
        hint: UPDATED_AT_INDEX.name,
        ...reads,
        signal,
      })
      .sort({ _id: 1 })
      .limit(MAX_PENDING + 1)
      .batchSize(MAX_PENDING + 1)
      .toArray();
    return rows.length > MAX_PENDING ? null : (rows as Row[]);
  }

  /**
   * Rows of `filter` minus `exclude` in `_id` order, as offset pages read them: an aggregation, not
   * find (find evaluates its projection on every row it skips), hinted to walk the primary key in
   * page order (left alone, the planner may read a whole category and sort it, or sort a scan for
   * a deep page). The unfiltered first page goes unhinted: the planner walks the primary key for
   * it anyway, and on DocumentDB a hint costs PostgreSQL ~0.2 ms of CPU per read (issue 29).
   */
  function sortedPage(
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
    return stored
      .aggregate<Row>(
        [
          { $match: match },
          { $sort: { _id: direction } },
          ...(skip > 0 ? [{ $skip: skip }] : []),
          { $limit: limit },
          { $project: WITHOUT_SEARCH_FIELDS },
        ],
        { ...reads, signal, ...(skip === 0 && isEmpty(match) ? {} : { hint: hintFor(plan) }) },
      )
      .toArray();
  }

  return {
    sortedPage,

    /** An offset page of a search (the first gram read is the answer when nothing is pending). */
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
      // The page as if nothing matched among the pending, read beside them: the answer when none
      // match. Awaited on every path, so no read outlives the request.
      const plainRead = sortedPage(filter, plan, { skip, limit, exclude: [] }, signal);
      // Handled at once: a failure while the pending read is out is not an unhandled rejection.
      const settled = plainRead.then(
        () => undefined,
        () => undefined,
      );
      const pending = await pendingMatches(criteria, since, signal).catch(async (error: unknown) => {
        await settled;
        throw error;
      });
      if (pending === null) {
        await settled;
        return sortedPage(productFilter(criteria), SCAN, { skip, limit }, signal);
      }
      if (pending.length === 0) return plainRead;
      // A first page's rows are among the first `limit` of each read (a row in both is kept once).
      if (skip === 0) return mergeById(await plainRead, pending).slice(0, limit);
      // A later page shifts by them: its read starts now, not after the plain one (at 1,000,000
      // products a `food` page 2 took two page reads' time, ×1.8–2.1, while writes matching it
      // were pending).
      const exclude = pending.map((row) => row._id);
      const window = gramWindow(skip, limit, pending.length);
      const [rows] = await Promise.all([sortedPage(filter, plan, { ...window, exclude }, signal), settled]);
      const page = offsetPage(rows, window.skip, pending, skip, limit);
      if (page) return page;
      const [tail, total] = await Promise.all([
        sortedPage(filter, plan, { skip: 0, limit: pending.length, exclude, direction: -1 }, signal),
        stored.countDocuments(excluding(raw(filter), exclude), { ...reads, signal }),
      ]);
      return tailPage(tail.reverse(), total, pending, skip, limit);
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
      const read = (filter: Filter<ProductDoc>, readPlan: SearchPlan) =>
        stored
          .find(ranged(raw(filter)), {
            projection: WITHOUT_SEARCH_FIELDS,
            ...(isEmpty(filter) ? {} : { hint: hintFor(readPlan) }),
            ...reads,
            signal,
          })
          .sort({ _id: descending ? -1 : 1 })
          .limit(limit)
          // One batch for the whole window: a 101-row window (first: 100 plus the look-ahead row)
          // would fill FerretDB's default first batch exactly and cost a killCursors round trip.
          .batchSize(limit)
          .toArray() as Promise<Row[]>;
      const since = plan.kind === 'grams' ? plan.pendingSince : undefined;
      if (!since) return read(productFilter(criteria, plan), plan);
      const [pending, rows] = await Promise.all([
        pendingMatches(criteria, since, signal),
        read(productFilter(criteria, plan), plan),
      ]);
      if (pending === null) return read(productFilter(criteria), SCAN);
      const inRange = pending.filter(
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
