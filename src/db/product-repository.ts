import type { Db, Filter } from 'mongodb';
import type { CallOptions, ReadLimits } from './deadline';
import type { ProductDoc } from './documents';
import { productRecord } from './records';
import {
  countClauses,
  createSearchPlanner,
  SEARCH_GRAMS_INDEX,
  searchClauses,
  walkMayFill,
  WALK_BUDGET,
  WITHOUT_SEARCH_FIELDS,
  writtenSince,
  type SearchPlan,
} from './product-search';
import { walkInIdOrder } from './id-order-walk';
import { PRIMARY_KEY, UPDATED_AT_INDEX } from './mongo';
import type { ChangeFeed } from './change-feed';
import type { TotalCache } from './total-cache';
import { compareIds, gramWindow, MAX_PENDING, mergeById, offsetPage, tailPage } from './search-pending';

export interface ProductCriteria {
  /** Every word must occur, case-insensitively, in one of the searchable fields. */
  words: readonly string[];
  /** Matches category_name exactly, case-insensitively. */
  category?: string;
}

export interface KeysetWindow {
  afterId?: number;
  beforeId?: number;
  limit: number;
  /** Walk backwards from `beforeId` (or the end); rows come back in descending id order. */
  descending: boolean;
}

const PROJECTION = { _id: 0, ...WITHOUT_SEARCH_FIELDS } as const;
/** Rows that are merged by `_id` (src/db/search-pending.ts) keep it until the merge is done. */
const MERGE_PROJECTION = WITHOUT_SEARCH_FIELDS;

type Keyed = ProductDoc & { _id?: unknown };

/** `filter` without the products `exclude` names (`_id`s of any type). */
function excluding(filter: Filter<ProductDoc>, exclude: readonly unknown[] | undefined): Filter<ProductDoc> {
  return exclude?.length ? ({ $and: [filter, { _id: { $nin: exclude } }] } as Filter<ProductDoc>) : filter;
}

function withoutIds(rows: readonly Keyed[]): ProductDoc[] {
  return rows.map(({ _id, ...row }) => row as ProductDoc);
}

export interface ProductRepositoryOptions extends ReadLimits {
  /** The products change feed (src/db/change-feed.ts): products written since its position may have stale grams. */
  feed?: Pick<ChangeFeed<unknown>, 'handledBefore' | 'hasUnhandled'>;
  /** Totals kept until the feed reports a change (src/db/total-cache.ts); absent, every count is run. */
  totals?: TotalCache;
}
/** `_id` is the product id (src/db/documents.ts): DocumentDB walks its primary key in this order. */
const ID_ORDER = { _id: 1 } as const;
/** A category or brand with how many products it has. */
export interface GroupCount {
  /** The category key (lower-cased name) or the brand id. */
  key: string;
  name: string;
  productCount: number;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function categoryKey(category: string): string {
  return category.toLowerCase();
}

const SCAN: SearchPlan = { kind: 'scan' };

/**
 * User text is escaped, so it is matched literally and can never act as a pattern or operator.
 * The plan only adds the grams that let an index pick candidates (src/db/product-search.ts).
 */
export function productFilter(criteria: ProductCriteria, plan: SearchPlan = SCAN): Filter<ProductDoc> {
  return withCategory(criteria, searchClauses(criteria.words, plan));
}

function withCategory(criteria: ProductCriteria, clauses: Filter<ProductDoc>[]): Filter<ProductDoc> {
  if (criteria.category !== undefined) clauses.unshift({ category_key: categoryKey(criteria.category) });
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as Filter<ProductDoc>;
  return { $and: clauses };
}

export function createProductRepository(db: Db, { maxTimeMS, feed, totals }: ProductRepositoryOptions = {}) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const products = db.collection<ProductDoc>('products');

  const planSearch = createSearchPlanner(products, reads, feed && (() => feed.handledBefore()));
  /**
   * Every page names its index: the gram index for a search read through the grams (PostgreSQL
   * estimates `$all` far too high and would walk the primary key testing every row), the primary
   * key otherwise.
   */
  const hintFor = (plan: SearchPlan) => (plan.kind === 'grams' ? SEARCH_GRAMS_INDEX.name : PRIMARY_KEY);
  function plan(criteria: ProductCriteria): Promise<SearchPlan> {
    return criteria.words.length > 0 ? planSearch(criteria.words) : Promise.resolve(SCAN);
  }

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
  ): Promise<ProductDoc[] | null> {
    if (criteria.category !== undefined || skip + limit > WALK_BUDGET) return null;
    const rows = await walkInIdOrder(
      products,
      {
        idRange,
        direction,
        budget: WALK_BUDGET,
        match: productFilter(criteria),
        skip,
        limit,
        projection: PROJECTION,
      },
      { ...reads, signal },
    );
    return rows.length === limit ? rows : null;
  }

  /**
   * The search's matches among products written since `since`, by the regexes alone, in `_id`
   * order; null when there are more than MAX_PENDING (then the search reads as a scan).
   */
  async function pendingMatches(
    criteria: ProductCriteria,
    since: Date,
    signal?: AbortSignal,
  ): Promise<Keyed[] | null> {
    const rows = await products
      .find(
        { $and: [productFilter(criteria), writtenSince(since)] },
        { projection: MERGE_PROJECTION, hint: UPDATED_AT_INDEX.name, ...reads, signal },
      )
      .sort(ID_ORDER)
      .limit(MAX_PENDING + 1)
      .batchSize(MAX_PENDING + 1)
      .toArray();
    return rows.length > MAX_PENDING ? null : rows;
  }

  /** Rows of `filter` minus `exclude` in `_id` order, as offset pages read them. */
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
  ): Promise<Keyed[]> {
    // An aggregation, not find: find evaluates its projection on every row it skips (a deep
    // page decoded each skipped document); here the skip happens before the projection.
    // Hinted to walk the primary key in page order, filtering as it goes: left alone, the
    // planner may read a whole category (or, on a fresh table, everything) and sort it.
    return products
      .aggregate<Keyed>(
        [
          { $match: excluding(filter, exclude) },
          { $sort: { _id: direction } },
          ...(skip > 0 ? [{ $skip: skip }] : []),
          { $limit: limit },
          { $project: exclude ? MERGE_PROJECTION : PROJECTION },
        ],
        { ...reads, signal, hint: hintFor(plan) },
      )
      .toArray();
  }

  /**
   * An offset page of a search through the grams while products may be pending: the pending
   * matches and the gram matches without them, merged (src/db/search-pending.ts). The first gram
   * read runs beside the pending one and is the answer when nothing is pending.
   */
  async function pageWithPending(
    criteria: ProductCriteria,
    plan: SearchPlan & { kind: 'grams' },
    since: Date,
    skip: number,
    limit: number,
    signal?: AbortSignal,
  ): Promise<ProductDoc[]> {
    const filter = productFilter(criteria, plan);
    const [pending, plain] = await Promise.all([
      pendingMatches(criteria, since, signal),
      sortedPage(filter, plan, { skip, limit, exclude: [] }, signal),
    ]);
    if (pending === null) return sortedPage(productFilter(criteria), SCAN, { skip, limit }, signal);
    if (pending.length === 0) return withoutIds(plain);
    // A first page's rows are among the first `limit` of each read (a row in both is kept once).
    if (skip === 0) return withoutIds(mergeById(plain, pending).slice(0, limit));
    const exclude = pending.map((row) => row._id);
    const window = gramWindow(skip, limit, pending.length);
    const rows = await sortedPage(filter, plan, { ...window, exclude }, signal);
    const page = offsetPage(rows, window.skip, pending, skip, limit);
    if (page) return withoutIds(page);
    const [tail, total] = await Promise.all([
      sortedPage(filter, plan, { skip: 0, limit: pending.length, exclude, direction: -1 }, signal),
      products.countDocuments(excluding(filter, exclude), { ...reads, signal }),
    ]);
    return withoutIds(tailPage(tail.reverse(), total, pending, skip, limit));
  }

  /**
   * Grouped on (key, name), and rows whose names differ only in case (one key) merged here,
   * keeping the lowest name: on DocumentDB a `$min` accumulator made the same $group 2.2× slower
   * (1.3 s against 0.59 s at 100,000 products, busy machine); a $group on the key alone with
   * `$sum` was 0.35 s but has no name.
   */
  async function groupCounts(key: string, name: string, signal?: AbortSignal): Promise<GroupCount[]> {
    const rows = await products
      .aggregate<{ _id: { key: string; name: string }; productCount: number }>(
        [{ $group: { _id: { key, name }, productCount: { $sum: 1 } } }],
        { ...reads, signal },
      )
      .toArray();
    const byKey = new Map<string, GroupCount>();
    for (const { _id, productCount } of rows) {
      const seen = byKey.get(_id.key);
      if (!seen) byKey.set(_id.key, { key: _id.key, name: _id.name, productCount });
      else
        byKey.set(_id.key, {
          ...seen,
          name: seen.name < _id.name ? seen.name : _id.name,
          productCount: seen.productCount + productCount,
        });
    }
    return [...byKey.values()].sort((a, b) => compare(a.name, b.name) || compare(a.key, b.key));
  }

  return {
    async count(criteria: ProductCriteria, { signal }: CallOptions = {}): Promise<number> {
      // Exact, never estimatedDocumentCount: DocumentDB estimates from planner statistics.
      const counted = async (abort?: AbortSignal) => {
        const filter = withCategory(criteria, countClauses(criteria.words, await plan(criteria)));
        return products.countDocuments(filter, { ...reads, signal: abort });
      };
      // A kept total is exact while the feed has handed on every write; else this one counts.
      if (!totals || !feed || (await feed.hasUnhandled())) return counted(signal);
      // Shared by every request of the filter: one client leaving does not abort it (maxTimeMS bounds it).
      const key = JSON.stringify([criteria.category?.toLowerCase() ?? null, [...criteria.words].sort()]);
      return totals.get(key, () => counted());
    },

    /** Offset paging for numbered pages (REST `page`/`per_page`). */
    async findPage(
      criteria: ProductCriteria,
      skip: number,
      limit: number,
      { signal }: CallOptions = {},
    ): Promise<ProductDoc[]> {
      const searchPlan = await plan(criteria);
      if (walkMayFill(searchPlan, skip + limit)) {
        const walked = await walk(criteria, undefined, 1, skip, limit, signal);
        if (walked) return walked;
      }
      if (searchPlan.kind === 'grams' && searchPlan.pendingSince)
        return pageWithPending(criteria, searchPlan, searchPlan.pendingSince, skip, limit, signal);
      return sortedPage(productFilter(criteria, searchPlan), searchPlan, { skip, limit }, signal);
    },

    /** Keyset paging for cursors: a deep page costs what the first one does on MongoDB. */
    async findWindow(
      criteria: ProductCriteria,
      window: KeysetWindow,
      { signal }: CallOptions = {},
    ): Promise<ProductDoc[]> {
      const idRange: { $gt?: number; $lt?: number } = {};
      if (window.afterId !== undefined) idRange.$gt = window.afterId;
      if (window.beforeId !== undefined) idRange.$lt = window.beforeId;
      const bounded = Object.keys(idRange).length > 0;
      const searchPlan = await plan(criteria);
      if (walkMayFill(searchPlan, window.limit)) {
        const walked = await walk(
          criteria,
          bounded ? idRange : undefined,
          window.descending ? -1 : 1,
          0,
          window.limit,
          signal,
        );
        if (walked) return walked;
      }
      const base = productFilter(criteria, searchPlan);
      const since = searchPlan.kind === 'grams' ? searchPlan.pendingSince : undefined;
      // One batch for the whole window: a 101-row window (first: 100 plus the look-ahead row)
      // would fill FerretDB's default first batch exactly and cost a killCursors round trip.
      const read = (filter: Filter<ProductDoc>, readPlan: SearchPlan, keepIds = false) =>
        products
          .find(bounded ? { $and: [filter, { _id: idRange }] } : filter, {
            projection: keepIds ? MERGE_PROJECTION : PROJECTION,
            hint: hintFor(readPlan),
            ...reads,
            signal,
          })
          .sort({ _id: window.descending ? -1 : 1 })
          .limit(window.limit)
          .batchSize(window.limit)
          .toArray() as Promise<Keyed[]>;
      if (!since) return read(base, searchPlan);
      // The window's first rows of the union are among the first `limit` of each: no exclusion needed.
      const [pending, rows] = await Promise.all([
        pendingMatches(criteria, since, signal),
        read(base, searchPlan, true),
      ]);
      if (pending === null) return read(productFilter(criteria), SCAN);
      const pendingInRange = pending.filter(
        (row) =>
          (idRange.$gt === undefined || compareIds(row._id, idRange.$gt) > 0) &&
          (idRange.$lt === undefined || compareIds(row._id, idRange.$lt) < 0),
      );
      const merged = window.descending
        ? mergeById([...rows].reverse(), pendingInRange).reverse()
        : mergeById(rows, pendingInRange);
      return withoutIds(merged.slice(0, window.limit));
    },

    /**
     * Grouped on category_key, the field `?category=` filters on, so each count is what that filter
     * reports. One aggregation; it reads the whole collection, so callers cache the result.
     */
    async countByCategory({ signal }: CallOptions = {}): Promise<GroupCount[]> {
      return groupCounts('$category_key', '$category_name', signal);
    },

    async countByBrand({ signal }: CallOptions = {}): Promise<GroupCount[]> {
      return groupCounts('$brand_id', '$brand_name', signal);
    },

    async findByIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<ProductDoc[]> {
      return products
        .find({ _id: { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal })
        .toArray();
    },

    async findByVariantIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<ProductDoc[]> {
      return products
        .find({ 'variant.id': { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal })
        .toArray();
    },

    async insertMany(docs: ProductDoc[]): Promise<void> {
      if (docs.length > 0) await products.insertMany(docs.map(productRecord), { ordered: false });
    },
  };
}

export type ProductRepository = ReturnType<typeof createProductRepository>;
