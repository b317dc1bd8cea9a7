import type { Db, Filter } from 'mongodb';
import type { CallOptions, ReadLimits } from './deadline';
import type { ProductDoc } from './documents';
import { productRecord } from './records';
import {
  createSearchPlanner,
  SEARCH_GRAMS_INDEX,
  searchClauses,
  walkMayFill,
  WALK_BUDGET,
  WITHOUT_SEARCH_FIELDS,
  type SearchPlan,
} from './product-search';
import { walkInIdOrder } from './id-order-walk';
import { createIndexKeeper, type IndexEvent } from './index-keeper';
import { PRIMARY_KEY } from './mongo';

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
  const clauses = searchClauses(criteria.words, plan);
  if (criteria.category !== undefined) clauses.unshift({ category_key: categoryKey(criteria.category) });
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as Filter<ProductDoc>;
  return { $and: clauses };
}

export interface ProductRepositoryOptions extends ReadLimits {
  /** Told when the gram index is found missing, and when creating it again ends. */
  onIndexEvent?: (event: IndexEvent) => void;
}

export function createProductRepository(db: Db, { maxTimeMS, onIndexEvent }: ProductRepositoryOptions = {}) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const products = db.collection<ProductDoc>('products');

  const planSearch = createSearchPlanner(products, reads);
  const gramIndex = createIndexKeeper(products, SEARCH_GRAMS_INDEX, { onEvent: onIndexEvent });
  /**
   * Every page names its index: the gram index for a search read through the grams (PostgreSQL
   * estimates `$all` far too high and would walk the primary key testing every row), the primary
   * key otherwise.
   */
  const hintFor = (plan: SearchPlan) => (plan.kind === 'grams' ? SEARCH_GRAMS_INDEX.name : PRIMARY_KEY);
  function plan(criteria: ProductCriteria): Promise<SearchPlan> {
    return criteria.words.length > 0 && gramIndex.usable()
      ? planSearch(criteria.words)
      : Promise.resolve(SCAN);
  }

  /** A read by its plan; one that finds the gram index missing is read again as a scan. */
  async function planned<T>(criteria: ProductCriteria, read: (plan: SearchPlan) => Promise<T>): Promise<T> {
    const searchPlan = await plan(criteria);
    if (searchPlan.kind !== 'grams') return read(searchPlan);
    return gramIndex.readWith(
      () => read(searchPlan),
      () => read(SCAN),
    );
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
      return products.countDocuments(productFilter(criteria, await plan(criteria)), { ...reads, signal });
    },

    /** Offset paging for numbered pages (REST `page`/`per_page`). */
    async findPage(
      criteria: ProductCriteria,
      skip: number,
      limit: number,
      { signal }: CallOptions = {},
    ): Promise<ProductDoc[]> {
      return planned(criteria, async (searchPlan) => {
        if (walkMayFill(searchPlan, skip + limit)) {
          const walked = await walk(criteria, undefined, 1, skip, limit, signal);
          if (walked) return walked;
        }
        // An aggregation, not find: find evaluates its projection on every row it skips (a deep
        // page decoded each skipped document); here the skip happens before the projection.
        // Hinted to walk the primary key in page order, filtering as it goes: left alone, the
        // planner may read a whole category (or, on a fresh table, everything) and sort it.
        const skipped = skip > 0 ? [{ $skip: skip }] : [];
        return products
          .aggregate<ProductDoc>(
            [
              { $match: productFilter(criteria, searchPlan) },
              { $sort: ID_ORDER },
              ...skipped,
              { $limit: limit },
              { $project: PROJECTION },
            ],
            { ...reads, signal, hint: hintFor(searchPlan) },
          )
          .toArray();
      });
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
      return planned(criteria, async (searchPlan) => {
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
        const filter: Filter<ProductDoc> = bounded ? { $and: [base, { _id: idRange }] } : base;
        // One batch for the whole window: a 101-row window (first: 100 plus the look-ahead row)
        // would fill FerretDB's default first batch exactly and cost a killCursors round trip.
        return products
          .find(filter, { projection: PROJECTION, hint: hintFor(searchPlan), ...reads, signal })
          .sort({ _id: window.descending ? -1 : 1 })
          .limit(window.limit)
          .batchSize(window.limit)
          .toArray();
      });
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
