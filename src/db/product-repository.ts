import type { Db, Filter } from 'mongodb';
import type { ReadLimits } from './deadline';
import { productRecord, type ProductDoc } from './documents';
import {
  createSearchPlanner,
  searchClauses,
  searchHint,
  WALK_BUDGET,
  WITHOUT_SEARCH_FIELDS,
  type SearchPlan,
} from './product-search';

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

export function createProductRepository(db: Db, { maxTimeMS }: ReadLimits = {}) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const products = db.collection<ProductDoc>('products');

  const planSearch = createSearchPlanner(products, reads);
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
  ): Promise<ProductDoc[] | null> {
    if (criteria.category !== undefined || skip + limit > WALK_BUDGET) return null;
    const rows = await products
      .aggregate<ProductDoc>(
        [
          ...(idRange ? [{ $match: { _id: idRange } }] : []),
          { $sort: { _id: direction } },
          { $limit: WALK_BUDGET },
          { $match: productFilter(criteria) },
          ...(skip > 0 ? [{ $skip: skip }] : []),
          { $limit: limit },
          { $project: PROJECTION },
        ],
        reads,
      )
      .toArray();
    return rows.length === limit ? rows : null;
  }

  /** One row per key; names that differ only in case share a key, and the lowest one is shown. */
  async function groupCounts(key: string, name: string): Promise<GroupCount[]> {
    const rows = await products
      .aggregate<GroupCount>(
        [
          { $group: { _id: key, name: { $min: name }, productCount: { $sum: 1 } } },
          { $project: { _id: 0, key: '$_id', name: 1, productCount: 1 } },
        ],
        reads,
      )
      .toArray();
    return rows.sort((a, b) => compare(a.name, b.name) || compare(a.key, b.key));
  }

  return {
    async count(criteria: ProductCriteria): Promise<number> {
      // Exact, never estimatedDocumentCount: DocumentDB estimates from planner statistics.
      return products.countDocuments(productFilter(criteria, await plan(criteria)), reads);
    },

    /** Offset paging for numbered pages (REST `page`/`per_page`). */
    async findPage(criteria: ProductCriteria, skip: number, limit: number): Promise<ProductDoc[]> {
      const searchPlan = await plan(criteria);
      if (searchPlan.kind === 'grams') {
        const walked = await walk(criteria, undefined, 1, skip, limit);
        if (walked) return walked;
      }
      // An aggregation, not find: find evaluates its projection on every row it skips (a deep
      // page decoded each skipped document); here the skip happens before the projection.
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
          { ...reads, ...searchHint(searchPlan) },
        )
        .toArray();
    },

    /** Keyset paging for cursors: a deep page costs what the first one does on MongoDB. */
    async findWindow(criteria: ProductCriteria, window: KeysetWindow): Promise<ProductDoc[]> {
      const idRange: { $gt?: number; $lt?: number } = {};
      if (window.afterId !== undefined) idRange.$gt = window.afterId;
      if (window.beforeId !== undefined) idRange.$lt = window.beforeId;
      const bounded = Object.keys(idRange).length > 0;
      const searchPlan = await plan(criteria);
      if (searchPlan.kind === 'grams') {
        const walked = await walk(
          criteria,
          bounded ? idRange : undefined,
          window.descending ? -1 : 1,
          0,
          window.limit,
        );
        if (walked) return walked;
      }
      const base = productFilter(criteria, searchPlan);
      const filter: Filter<ProductDoc> = bounded ? { $and: [base, { _id: idRange }] } : base;
      // One batch for the whole window: a 101-row window (first: 100 plus the look-ahead row)
      // would fill FerretDB's default first batch exactly and cost a killCursors round trip.
      return products
        .find(filter, { projection: PROJECTION, ...reads, ...searchHint(searchPlan) })
        .sort({ _id: window.descending ? -1 : 1 })
        .limit(window.limit)
        .batchSize(window.limit)
        .toArray();
    },

    /**
     * Grouped on category_key, the field `?category=` filters on, so each count is what that filter
     * reports. One aggregation; it reads the whole collection, so callers cache the result.
     */
    async countByCategory(): Promise<GroupCount[]> {
      return groupCounts('$category_key', '$category_name');
    },

    async countByBrand(): Promise<GroupCount[]> {
      return groupCounts('$brand_id', '$brand_name');
    },

    async findByIds(ids: readonly number[]): Promise<ProductDoc[]> {
      return products.find({ _id: { $in: [...ids] } }, { projection: PROJECTION, ...reads }).toArray();
    },

    async findByVariantIds(ids: readonly number[]): Promise<ProductDoc[]> {
      return products
        .find({ 'variant.id': { $in: [...ids] } }, { projection: PROJECTION, ...reads })
        .toArray();
    },

    async insertMany(docs: ProductDoc[]): Promise<void> {
      if (docs.length > 0) await products.insertMany(docs.map(productRecord), { ordered: false });
    },
  };
}

export type ProductRepository = ReturnType<typeof createProductRepository>;
