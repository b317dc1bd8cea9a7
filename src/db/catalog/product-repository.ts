import type { Db, Document, Filter } from 'mongodb';
import type { SearchPlan } from './product-search';
import type { CallOptions, ReadLimits } from '../guards/deadline';
import { fillWindow, readEach, readProduct, type UnreadableReport } from '../document-reading';
import type { ProductDoc } from '../documents';
import { countGroups, groupsOf, type GroupCount, type Grouping } from './product-groups';
import {
  amongKeys,
  foreignKeyProbe,
  keysWithin,
  mergeWindow,
  pageSlots,
  type KeyShape,
} from '../foreign-keys';
import { productRecord } from '../records';
import { writeRowsOf } from '../derived/search-projection';
import { projectionComplete, SEARCH_PROJECTION_COLLECTION } from './search-projection-mark';
import { createProductPlanner, productFilter, type ProductCriteria } from './product-plans';
import { createPendingReads } from './product-pending-reads';
import { createCounter } from './product-counts';
import type { ChangeFeed } from '../change-feed';
import type { TotalCache } from './total-cache';
import { keptCountFor } from './total-adjust';
import { createKeptGroups } from './kept-count';
import type { BeforeImages } from '../derived/search-state';
import type { IndexEvent } from '../guards/index-keeper';
import { walkMayFill, WALK_BUDGET, WITHOUT_SEARCH_FIELDS } from './product-search';
import { walkInIdOrder } from '../id-order-walk';
import { ID_FIELD_INDEX } from '../mongo';
import { createCategoryProbe } from './category-probe';

export interface KeysetWindow {
  afterId?: number;
  beforeId?: number;
  limit: number;
  /** Walk backwards from `beforeId` (or the end); rows come back in descending id order. */
  descending: boolean;
}

/** `_id` stays: a numeric one must be the id (src/db/document-reading.ts). */
const PROJECTION = WITHOUT_SEARCH_FIELDS;

const PRODUCT_KEYS: KeyShape<number> = {
  field: 'id',
  isOwnKey: (key) => typeof key === 'number',
  valueOf: (raw) => (typeof raw === 'number' && Number.isSafeInteger(raw) ? raw : undefined),
};

/** A product as stored, by this or another writer: nothing is known until readProduct. */
interface Raw {
  _id?: unknown;
  [field: string]: unknown;
}
const raw = (filter: Filter<ProductDoc>) => filter as Filter<Document>;
/** A condition on `_id`, which the driver's types take for an ObjectId. */
const onKeys = (condition: object) => ({ _id: condition }) as Filter<Document>;
/** The id a stored product is listed by: its numeric `_id`, or else its `id`. */
const listedId = (raw: Raw) => (typeof raw._id === 'number' ? raw._id : (raw.id as number));

/** A page of stored products: the readable ones, and how many were stored in that page. */
export interface ProductPage {
  items: ProductDoc[];
  stored: number;
}

const ownKeyed = (row: Raw) => PRODUCT_KEYS.isOwnKey(row._id);
const unfiltered = (criteria: ProductCriteria) =>
  criteria.words.length === 0 && criteria.category === undefined;

export interface ProductRepositoryOptions extends ReadLimits {
  /** Told of each stored product that cannot be served (it is left out). */ onUnreadable?: UnreadableReport;
  /** Told when the gram index is found missing, and when creating it again ends. */
  onIndexEvent?: (event: IndexEvent) => void;
  /** The products change feed (src/db/change-feed.ts): products written since its position may have stale grams. */
  feed?: Pick<ChangeFeed<unknown>, 'handledBefore' | 'hasUnhandled' | 'handedOn' | 'mode'>;
  /** Totals kept until the feed reports a change (src/db/catalog/total-cache.ts); absent, every count is run. */
  totals?: TotalCache;
  /** The products' before-images (src/db/derived/search-state.ts); absent or not ready, pending writes mean a count. */
  beforeImages?: BeforeImages;
}

export function createProductRepository(
  db: Db,
  { maxTimeMS, onUnreadable, onIndexEvent, feed, totals, beforeImages }: ProductRepositoryOptions = {},
) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const products = db.collection<ProductDoc>('products');
  /** The same collection, read as stored: every document goes through readProduct. */
  const stored = db.collection('products');
  const foreignKeys = foreignKeyProbe(stored, PRODUCT_KEYS, reads);
  const read = (rows: Raw[]) => readEach('products', rows, readProduct, onUnreadable);
  /** A category no product has: its page is empty, without walking the collection for it. */
  const emptyCategory = createCategoryProbe(stored, reads);

  /** The gateway's copy of what a search reads: a read through the grams selects from it. */
  const index = db.collection(SEARCH_PROJECTION_COLLECTION);
  const { plan, planned, hintFor } = createProductPlanner(
    db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION),
    () => projectionComplete(db, reads),
    { maxTimeMS, onIndexEvent, feed },
  );
  const pendingReads = createPendingReads({ stored, index, reads, hintFor });
  const countMatches = createCounter(stored, index, reads);
  const keptCount = totals && feed && keptCountFor(db, { stored, reads, feed, totals, beforeImages });

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

  /** Products sorted by their `id` field: for a collection most of which other writers keyed. */
  function byIdField(filter: Filter<Document>, direction: 1 | -1, signal?: AbortSignal) {
    return stored.find(filter, { projection: PROJECTION, ...reads, signal }).sort({ id: direction });
  }

  /** The stored rows of a page: own-keyed rows merged with other writers' in id order. */
  async function storedPage(criteria: ProductCriteria, skip: number, limit: number, signal?: AbortSignal) {
    if (await emptyCategory(criteria, signal)) return [];
    const foreign = await foreignKeys();
    // Keys below every number (null, MinKey) would shift the offsets of the own rows: rare enough
    // to read such a collection the slow way.
    if (foreign.overflow || foreign.below > 0)
      return byIdField(raw(productFilter(criteria)), 1, signal)
        .skip(skip)
        .limit(limit)
        .toArray();
    if (foreign.keys.length === 0) return ownPage(criteria, skip, limit, signal);
    // Without a filter every foreign product matches: their ids are known already.
    const matching = unfiltered(criteria)
      ? foreign.keys.map(({ value }) => value)
      : (
          await stored
            .find(
              amongKeys(
                raw(productFilter(criteria)),
                foreign.keys.map(({ key }) => key),
              ),
              {
                projection: { _id: 0, id: 1 },
                ...reads,
                signal,
              },
            )
            .toArray()
        )
          .map((row) => row.id as number)
          .sort((a, b) => a - b);
    const ownSkip = Math.max(0, skip - matching.length);
    const own = await ownPage(criteria, ownSkip, limit + (skip - ownSkip), signal);
    const slots = pageSlots(own, ownSkip, matching, listedId, skip, limit);
    const wanted = new Set(slots.flatMap((slot) => ('foreign' in slot ? [slot.foreign] : [])));
    const theirs = new Map<number, Raw>();
    if (wanted.size > 0) {
      const keys = foreign.keys.filter(({ value }) => wanted.has(value)).map(({ key }) => key);
      const rows = await stored
        .find(onKeys({ $in: keys }), { projection: PROJECTION, ...reads, signal })
        .toArray();
      for (const row of rows) theirs.set(row.id as number, row);
    }
    return slots.flatMap((slot) => {
      if ('own' in slot) return [slot.own];
      const row = theirs.get(slot.foreign);
      return row ? [row] : [];
    });
  }

  /** The stored rows of a keyset window, own-keyed and other writers' merged in id order. */
  async function storedWindow(criteria: ProductCriteria, window: KeysetWindow, signal?: AbortSignal) {
    const direction = window.descending ? -1 : 1;
    if (await emptyCategory(criteria, signal)) return [];
    const foreign = await foreignKeys();
    if (foreign.overflow) {
      const idRange: { $gt?: number; $lt?: number } = {};
      if (window.afterId !== undefined) idRange.$gt = window.afterId;
      if (window.beforeId !== undefined) idRange.$lt = window.beforeId;
      const base = raw(productFilter(criteria));
      const filter = Object.keys(idRange).length > 0 ? { $and: [base, { id: idRange }] } : base;
      return byIdField(filter, direction, signal).limit(window.limit).toArray();
    }
    // Other writers' keys on the side the walk starts from would come first in `_id` order.
    const foreignFirst = window.descending ? foreign.above : foreign.below;
    const inRange = keysWithin(foreign.keys, { after: window.afterId, before: window.beforeId });
    // Unfiltered, only the first `limit` of them in the window's order can be in it.
    const keys = !unfiltered(criteria)
      ? inRange
      : window.descending
        ? inRange.slice(-window.limit)
        : inRange.slice(0, window.limit);
    const [own, theirs] = await Promise.all([
      ownWindow(criteria, window, foreignFirst > 0, signal),
      keys.length === 0
        ? []
        : stored
            .find(amongKeys(raw(productFilter(criteria)), keys), { projection: PROJECTION, ...reads, signal })
            .sort({ id: direction })
            .limit(window.limit)
            .toArray(),
    ]);
    return mergeWindow(own, theirs, listedId, direction, window.limit);
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
      const rows = await storedPage(criteria, skip, limit, signal);
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
        (part) => storedWindow(criteria, part, signal),
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

    /** By the primary key (`_id` = id); the ids it does not hold, by the `id` field's index. */
    async findByIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<ProductDoc[]> {
      const own = await stored
        .find(onKeys({ $in: [...ids] }), { projection: PROJECTION, ...reads, signal })
        .toArray();
      const found = new Set<unknown>(own.map((row) => row._id));
      const missing = ids.filter((id) => !found.has(id));
      const theirs =
        missing.length === 0
          ? []
          : await stored
              .find(
                { id: { $in: missing }, _id: { $not: { $type: 'number' as 'double' } } },
                { projection: PROJECTION, hint: ID_FIELD_INDEX, ...reads, signal },
              )
              .toArray();
      return read([...own, ...theirs] as Raw[]);
    },

    async findByVariantIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<ProductDoc[]> {
      return read(
        (await stored
          .find({ 'variant.id': { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal })
          .toArray()) as Raw[],
      );
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
