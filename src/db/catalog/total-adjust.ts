import type { Collection, Db, Document } from 'mongodb';
import type { HandledBefore } from '../feed-types';
import { UPDATED_AT_INDEX } from '../mongo';
import { READABLE_PRODUCT } from './readable-filter';
import { productFilter, type ProductCriteria } from './product-plans';
import { writtenSince } from './product-search';
import { MAX_PENDING } from './search-pending';
import type { CleanTotal, TotalCache } from './total-cache';
import type { ChangeFeed } from '../change-feed';
import { IMAGED_AT, SEARCH_STATE_COLLECTION, type BeforeImages } from '../derived/search-state';
import { createLogKeptCount, totalKey } from './kept-count';
import { createGramsEpochCheck } from '../derived/grams-epoch';

/**
 * A filter's total while outside writes are pending, from its kept total without counting again:
 *
 *   total now = kept − (pending products whose before-image matches) + (pending products that match now)
 *
 * The kept total was counted while nothing was pending, so it equals the count over the
 * before-images (src/db/derived/search-state.ts); every product not pending is as its before-image says.
 * Pending products (written since the feed's position: the look-back's too, a superset is exact)
 * are few and read by `updated_at`; both terms are the filter's own `$match` on them (now) and on
 * their before-images read by `_id` (before): the same matching as the count, and no user text
 * beyond its escaped regexes. A pending product without a before-image (inserted since) adds only
 * its "now" term.
 *
 * Why no moment is wrong: the feed drops the kept totals before it writes the before-images of a
 * batch (src/server.ts subscribes in that order), and an adjustment is used only if its total is
 * still kept after its read answered. So a before-image this server wrote is never newer than
 * its total. Every instance of a fleet writes the same before-images (each its products as they
 * are when it hands a change on): one ahead of this server has written the image of a write this
 * total did not count, one behind it may have written an earlier state. Each image says when it
 * was written; one written since this total's count started is not trusted, and the request
 * counts. (Instances' clocks are taken to agree; a skew between them is the bound.) Deletions
 * are not seen here, as by a kept total with nothing pending: the feed's count of the collection
 * (CHANGE_FEED_RECONCILE_MS) notices them and drops every total.
 */

export interface KeptCountOptions {
  stored: Collection<Document>;
  /** The before-images (src/db/derived/search-state.ts). */
  states: Collection<Document>;
  reads: object;
  feed: Pick<ChangeFeed<unknown>, 'handledBefore' | 'hasUnhandled'>;
  totals: TotalCache;
  beforeImages?: BeforeImages;
  /** Asked before any kept total is read (src/db/derived/grams-epoch.ts: it may drop them all). */
  beforeKept?: (signal?: AbortSignal) => Promise<void>;
}

interface Terms {
  /** The pending products (at most MAX_PENDING + 1). */
  ids: { _id: unknown }[];
  now: { n: number }[];
}

interface Images {
  before: { n: number }[];
  since: { n: number }[];
}

const counted = (rows: { n: number }[]) => rows[0]?.n ?? 0;

/**
 * How long after the feed last said writes were pending a kept total is adjusted at once, without
 * asking it again (the adjustment is exact either way: one read instead of two): the look-back's
 * default, for which a handed-on write still counts as pending.
 */
const RECENTLY_PENDING_MS = 5_000;

/** A filter's total through the kept totals: kept, adjusted, or `count`ed. */
export function createKeptCount({
  stored,
  states,
  reads,
  feed,
  totals,
  beforeImages,
  beforeKept,
}: KeptCountOptions) {
  let pendingSeenAt = -Infinity;

  async function adjusted(
    criteria: ProductCriteria,
    kept: CleanTotal,
    since: HandledBefore,
    signal?: AbortSignal,
  ): Promise<number | undefined> {
    const filter = productFilter(criteria) as Document;
    // One read of the products: which are pending, and how many of them match now. Their
    // before-images are read apart: joined in the same statement ($lookup), DocumentDB took 6–8 ms
    // at 1,000,000 before-images even with nothing pending, against ~1.5 ms for the second read.
    // The answer is exact as of the first read: the before-images cannot change under it while
    // the kept total is current (checked after both).
    const [terms] = await stored
      .aggregate<Terms>(
        [
          { $match: writtenSince(since) },
          { $limit: MAX_PENDING + 1 },
          {
            $facet: {
              ids: [{ $project: { _id: 1 } }],
              // As the kept total counts: products a page can serve (src/db/catalog/readable-filter.ts).
              now: [{ $match: { $and: [filter, READABLE_PRODUCT] } }, { $count: 'n' }],
            },
          },
        ],
        { hint: UPDATED_AT_INDEX.name, ...reads, signal },
      )
      .toArray();
    // A backlog: counting is cheaper than reading it.
    if (!terms || terms.ids.length > MAX_PENDING) return undefined;
    if (terms.ids.length === 0) return kept.current() ? kept.total : undefined;
    const [images] = await states
      .aggregate<Images>(
        [
          { $match: { _id: { $in: terms.ids.map((row) => row._id) } } },
          {
            $facet: {
              // An image holds the name, not the price: a product unreadable by its price alone
              // before the write is subtracted though its total left it out (polling only).
              before: [{ $match: { $and: [filter, { name: READABLE_PRODUCT.name }] } }, { $count: 'n' }],
              // Written since this total's count started: by another instance of the fleet, of a
              // write this one has not handed on (so not counted in this total), or of an earlier one.
              since: [{ $match: { [IMAGED_AT]: { $gte: kept.countedFrom } } }, { $count: 'n' }],
            },
          },
        ],
        { ...reads, signal },
      )
      .toArray();
    if (!images || counted(images.since) > 0) return undefined;
    return kept.current() ? kept.total - counted(images.before) + counted(terms.now) : undefined;
  }

  return async function keptCount(
    criteria: ProductCriteria,
    count: (signal?: AbortSignal) => Promise<number>,
    signal?: AbortSignal,
  ): Promise<number> {
    const key = totalKey(criteria);
    // Read beside the feed's check (it may drop every total): both are over before a kept total
    // is served; an adjustment read before it ends stands only if its total is still kept.
    const epochChecked = beforeKept?.(signal);
    const recentlyPending = performance.now() - pendingSeenAt < RECENTLY_PENDING_MS;
    if (recentlyPending) await epochChecked;
    const kept = totals.clean(key);
    const since = feed.handledBefore();
    const adjust = () => (kept && since ? adjusted(criteria, kept, since, signal) : undefined);
    // Refused once (a backlog, an image written since the count, the total dropped), it would be
    // refused again for the same reason: not asked twice.
    let refused = false;
    if (kept && recentlyPending) {
      const total = await adjust();
      if (total !== undefined) return total;
      refused = true;
    }
    const [unhandled] = await Promise.all([feed.hasUnhandled(), epochChecked]);
    if (unhandled) {
      pendingSeenAt = performance.now();
      return (refused ? undefined : await adjust()) ?? count(signal);
    }
    // Before-images complete when the count starts: no backfill writes one newer than it.
    const imaged = beforeImages?.ready() ?? false;
    // Shared by every request of the filter: one client leaving does not abort it (maxTimeMS bounds it).
    return totals.get(
      key,
      () => count(),
      async () => imaged && !(await feed.hasUnhandled()),
    );
  };
}

/** The kept count of a repository: from the log's position, or adjusted by the before-images (polling). */
export function keptCountFor(
  db: Db,
  options: Pick<KeptCountOptions, 'stored' | 'reads' | 'totals' | 'beforeImages'> & {
    feed: Pick<ChangeFeed<unknown>, 'handledBefore' | 'hasUnhandled' | 'handedOn' | 'mode'>;
  },
) {
  const { feed, totals, reads } = options;
  if (feed.mode === 'log') return createLogKeptCount(feed, totals);
  return createKeptCount({
    ...options,
    states: db.collection(SEARCH_STATE_COLLECTION),
    beforeKept: createGramsEpochCheck(db, totals, reads),
  });
}
