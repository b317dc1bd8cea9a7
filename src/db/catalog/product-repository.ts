import type { Db } from 'mongodb';
import type { CallOptions, ReadLimits } from '../guards/deadline';
import { fillWindow, readEach, readProduct, type UnreadableReport } from '../document-reading';
import type { ProductDoc } from '../documents';
import { countGroups, groupsOf, type GroupCount, type Grouping } from './product-groups';
import { foreignKeyProbe } from '../foreign-keys';
import { productRecord } from '../records';
import { writeRowsOf } from '../derived/search-projection';
import type { ProductCriteria } from './product-plans';
import { createSearchReads } from './product-search-reads';
import type { SearchScanReason } from './product-search';
import type { ChangeFeed } from '../change-feed';
import type { TotalCache } from './total-cache';
import { keptCountFor } from './total-adjust';
import { createKeptGroups } from './kept-count';
import type { BeforeImages } from '../derived/search-state';
import type { IndexEvent } from '../guards/index-keeper';
import { createCategoryProbe } from './category-probe';
import { createOwnReads } from './product-own-reads';
import { createStoredReads } from './product-stored-reads';
import { createKeyReads } from './product-key-reads';
import { listedId, PRODUCT_KEYS, type KeysetWindow, type Raw } from './product-rows';

export type { KeysetWindow } from './product-rows';

/** A page of stored products: the readable ones, and how many were stored in that page. */
export interface ProductPage {
  items: ProductDoc[];
  stored: number;
}

export interface ProductRepositoryOptions extends ReadLimits {
  /** Told of each stored product that cannot be served (it is left out). */ onUnreadable?: UnreadableReport;
  /** Told when the gram index is found missing, and when creating it again ends. */
  onIndexEvent?: (event: IndexEvent) => void;
  /** Told why a search scans instead of reading the grams. */
  onSearchScan?: (reason: SearchScanReason) => void;
  /** The products change feed (src/db/change-feed.ts): products written since its position may have stale grams. */
  feed?: Pick<ChangeFeed<unknown>, 'handledBefore' | 'hasUnhandled' | 'handedOn' | 'underived' | 'mode'>;
  /** Totals kept until the feed reports a change (src/db/catalog/total-cache.ts); absent, every count is run. */
  totals?: TotalCache;
  /** The products' before-images (src/db/derived/search-state.ts); absent or not ready, pending writes mean a count. */
  beforeImages?: BeforeImages;
}

export function createProductRepository(
  db: Db,
  {
    maxTimeMS,
    onUnreadable,
    onIndexEvent,
    onSearchScan,
    feed,
    totals,
    beforeImages,
  }: ProductRepositoryOptions = {},
) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const products = db.collection<ProductDoc>('products');
  /** The same collection, read as stored: every document goes through readProduct. */
  const stored = db.collection('products');
  const foreignKeys = foreignKeyProbe(stored, PRODUCT_KEYS, reads);
  const keyReads = createKeyReads(stored, reads);
  const read = (rows: Raw[]) => readEach('products', rows, readProduct, onUnreadable);
  /** A category no product has: its page is empty, without walking the collection for it. */
  const emptyCategory = createCategoryProbe(stored, reads);

  const { plan, planned, pendingReads, countMatches } = createSearchReads(db, stored, reads, {
    maxTimeMS,
    onIndexEvent,
    feed,
    onSearchScan,
  });
  const keptCount = totals && feed && keptCountFor(db, { stored, reads, feed, totals, beforeImages });
  const storedReads = createStoredReads({
    stored,
    reads,
    foreignKeys,
    emptyCategory,
    own: createOwnReads({ stored, reads, planned, pendingReads }),
  });

  /** Counts by group (src/db/catalog/product-groups.ts), readable products only, kept as their tally. */
  const keptGroups = createKeptGroups(feed, totals);
  const groupCounts = async (grouping: Grouping, signal?: AbortSignal) =>
    groupsOf(
      await keptGroups(
        grouping,
        (abort) => countGroups(stored, grouping, { ...reads, signal: abort }),
        signal,
      ),
    );

  return {
    async count(criteria: ProductCriteria, { signal }: CallOptions = {}): Promise<number> {
      // A category no product has: 0, not a kept total per random key (they would evict real ones).
      if (await emptyCategory(criteria, signal)) return 0;
      // Exact, never estimatedDocumentCount: DocumentDB estimates from planner statistics.
      const counted = async (abort?: AbortSignal) => countMatches(criteria, await plan(criteria), abort);
      return keptCount ? keptCount(criteria, counted, signal) : counted(signal);
    },

    /**
     * Offset paging for numbered pages (REST `page`/`per_page`). An unreadable product leaves a
     * gap in its page (`stored` counts it), so the other pages keep their items.
     */
    async findPage(
      criteria: ProductCriteria,
      skip: number,
      limit: number,
      { signal }: CallOptions = {},
    ): Promise<ProductPage> {
      const rows = await storedReads.page(criteria, skip, limit, signal);
      return { items: read(rows), stored: rows.length };
    },

    /** Keyset paging for cursors: a deep page costs what the first one does on MongoDB. */
    async findWindow(
      criteria: ProductCriteria,
      window: KeysetWindow,
      { signal }: CallOptions = {},
    ): Promise<ProductDoc[]> {
      return fillWindow(
        window,
        (part) => storedReads.window(criteria, part, signal),
        read,
        (part, row, limit) => ({
          ...part,
          ...(part.descending ? { beforeId: listedId(row) } : { afterId: listedId(row) }),
          limit,
        }),
      );
    },

    /**
     * Grouped on category_key, the field `?category=` filters on, so each count is what that filter
     * reports. One aggregation over the whole collection (13 ms of the database's CPU at 10,000
     * products), kept like a total. The keys cannot be a filter's (those are JSON arrays).
     */
    async countByCategory({ signal }: CallOptions = {}): Promise<GroupCount[]> {
      return groupCounts('categories', signal);
    },

    async countByBrand({ signal }: CallOptions = {}): Promise<GroupCount[]> {
      return groupCounts('brands', signal);
    },

    async findByIds(ids: readonly number[], options?: CallOptions): Promise<ProductDoc[]> {
      return read(await keyReads.byIds(ids, options));
    },

    async findByVariantIds(ids: readonly number[], options?: CallOptions): Promise<ProductDoc[]> {
      return read(await keyReads.byVariantIds(ids, options));
    },

    async insertMany(docs: ProductDoc[]): Promise<void> {
      if (docs.length === 0) return;
      const records = docs.map(productRecord);
      await products.insertMany(records, { ordered: false });
      await writeRowsOf(db, records);
    },
  };
}

export type ProductRepository = ReturnType<typeof createProductRepository>;
