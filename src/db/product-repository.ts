import escapeStringRegexp from 'escape-string-regexp';
import type { Db, Filter } from 'mongodb';
import type { CallOptions, ReadLimits } from './deadline';
import type { ProductDoc } from './documents';

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

const SEARCHABLE_FIELDS = ['name', 'short_description', 'brand_name', 'category_name', 'tags'] as const;
const PROJECTION = { _id: 0 } as const;
const ID_ORDER = { id: 1 } as const;

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

/** User text is escaped, so it is matched literally and can never act as a pattern or operator. */
export function productFilter(criteria: ProductCriteria): Filter<ProductDoc> {
  const clauses: Filter<ProductDoc>[] = criteria.words.map((word) => {
    const literal = { $regex: escapeStringRegexp(word), $options: 'i' };
    return { $or: SEARCHABLE_FIELDS.map((field) => ({ [field]: literal })) };
  });
  if (criteria.category !== undefined) clauses.unshift({ category_key: categoryKey(criteria.category) });
  if (clauses.length === 0) return {};
  if (clauses.length === 1) return clauses[0] as Filter<ProductDoc>;
  return { $and: clauses };
}

function isUnfiltered(criteria: ProductCriteria): boolean {
  return criteria.words.length === 0 && criteria.category === undefined;
}

export function createProductRepository(db: Db, { maxTimeMS }: ReadLimits = {}) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const products = db.collection<ProductDoc>('products');

  /**
   * Grouped on (key, name) because FerretDB 1.24 implements only $count and $sum in $group; rows
   * whose names differ only in case (one key) are merged here, keeping the lowest name.
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
      if (isUnfiltered(criteria)) return products.estimatedDocumentCount(reads);
      return products.countDocuments(productFilter(criteria), { ...reads, signal });
    },

    /** Offset paging for numbered pages (REST `page`/`per_page`). */
    async findPage(
      criteria: ProductCriteria,
      skip: number,
      limit: number,
      { signal }: CallOptions = {},
    ): Promise<ProductDoc[]> {
      return products
        .find(productFilter(criteria), { projection: PROJECTION, ...reads, signal })
        .sort(ID_ORDER)
        .skip(skip)
        .limit(limit)
        .toArray();
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
      const base = productFilter(criteria);
      const filter: Filter<ProductDoc> = Object.keys(idRange).length
        ? { $and: [base, { id: idRange }] }
        : base;
      // One batch for the whole window: a 101-row window (first: 100 plus the look-ahead row)
      // would fill FerretDB's default first batch exactly and cost a killCursors round trip.
      return products
        .find(filter, { projection: PROJECTION, ...reads, signal })
        .sort({ id: window.descending ? -1 : 1 })
        .limit(window.limit)
        .batchSize(window.limit)
        .toArray();
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
      return products.find({ id: { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal }).toArray();
    },

    async findByVariantIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<ProductDoc[]> {
      return products
        .find({ 'variant.id': { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal })
        .toArray();
    },

    async insertMany(docs: ProductDoc[]): Promise<void> {
      if (docs.length > 0) await products.insertMany(docs, { ordered: false });
    },
  };
}

export type ProductRepository = ReturnType<typeof createProductRepository>;
