import type { Collection, Document, Filter, IndexDescription } from 'mongodb';
import { INDEXES, PRIMARY_KEY } from '../mongo';
import { walkInIdOrder } from '../id-order-walk';
import { createIndexKeeper, type IndexEvent } from '../guards/index-keeper';
import type { OrderDoc } from '../documents';
import { amongKeys, keysWithin, mergeWindow, type foreignKeyProbe } from '../foreign-keys';
import {
  indexLeadingWith,
  listedUlid,
  onKeys,
  ORDER_KEYS,
  orderFilter,
  PROJECTION,
  RECENT_WALK,
  type OrderCriteria,
  type OrderWindow,
  type Raw,
} from './order-filter';

/**
 * The stored rows of an order list's window: the own-keyed orders (`_id` = ulid) by a bounded
 * walk of the primary key or the index of the list's most selective member, merged by ULID with
 * those other writers keyed their own way.
 */

export interface OrderWindowOptions {
  orders: Collection<OrderDoc>;
  stored: Collection;
  reads: object;
  foreignKeys: ReturnType<typeof foreignKeyProbe<string>>;
  onIndexEvent?: (event: IndexEvent) => void;
}

export function createOrderWindows({ orders, stored, reads, foreignKeys, onIndexEvent }: OrderWindowOptions) {
  // Looked up once, not on every list; a missing index fails here, not as an undefined hint.
  const byCustomer = indexLeadingWith('customer_id');
  const byFulfillment = indexLeadingWith('fulfillment_status');
  const byPayment = indexLeadingWith('payment_status');
  // Each kept: a list whose index was dropped from outside is answered without it meanwhile.
  const keepers = new Map(
    [byCustomer, byFulfillment, byPayment].map((name) => {
      const index = INDEXES.orders.find((wanted) => wanted.name === name) as IndexDescription & {
        name: string;
      };
      return [name, createIndexKeeper(orders, index, { onEvent: onIndexEvent })];
    }),
  );

  /** The index of the most selective member a list filters on, if any. */
  function narrowingIndex(criteria: OrderCriteria): string | undefined {
    if (criteria.customerId !== undefined) return byCustomer;
    if (criteria.fulfillmentStatuses) return byFulfillment;
    if (criteria.paymentStatuses) return byPayment;
    return undefined;
  }

  /**
   * The own-keyed rows of a window (`_id` = ulid), newest first unless `oldestFirst`. With other
   * writers' keys on the side the walk starts from and no range on `_id`, the walk is bounded by
   * the range every ULID lies in (a range on a string holds strings only), so it starts at the
   * own keys instead of reading through theirs.
   */
  async function ownWindow(
    criteria: OrderCriteria,
    window: OrderWindow,
    bracketed: boolean,
    signal?: AbortSignal,
  ): Promise<Raw[]> {
    const { limit } = window;
    const ranged = orderFilter(criteria, window) as Filter<Document>;
    const filter =
      bracketed && ranged._id === undefined
        ? { ...ranged, ...onKeys(window.oldestFirst ? { $gte: '0' } : { $lt: '8' }) }
        : ranged;
    const order = { _id: window.oldestFirst ? 1 : -1 } as const;
    const index = narrowingIndex(criteria);
    const own = (rows: Raw[]) => rows.filter((row) => ORDER_KEYS.isOwnKey(row._id)).slice(0, window.limit);
    // One batch for the whole window (see the product repository's findWindow).
    const find = async (hint: string) =>
      own(
        await stored
          .find(filter, { projection: PROJECTION, hint, ...reads, signal })
          .sort(order)
          .limit(limit)
          .batchSize(limit)
          .toArray(),
      );
    if (index === undefined) return find(PRIMARY_KEY);
    const { _id: keyRange, ...members } = filter;
    const recent = await walkInIdOrder(
      stored,
      {
        idRange: keyRange,
        direction: order._id,
        budget: RECENT_WALK,
        match: members,
        limit,
        projection: PROJECTION,
      },
      // Unhinted: $sort and $limit come first, so the planner walks the primary key anyway, and on
      // DocumentDB a hint cost PostgreSQL ~0.15 ms per list (issue 29).
      { ...reads, signal, batchSize: limit },
    );
    if (recent.length === limit) return own(recent);
    return keepers.get(index)!.readWith(
      () => find(index),
      () => find(PRIMARY_KEY),
    );
  }

  /** The stored rows of a window: own-keyed and other writers' orders merged by ULID. */
  async function storedWindow(criteria: OrderCriteria, window: OrderWindow, signal?: AbortSignal) {
    const direction = window.oldestFirst ? 1 : -1;
    const foreign = await foreignKeys();
    const { _id: range, ...members } = orderFilter(criteria, window) as Filter<Document>;
    if (foreign.overflow) {
      const filter = range === undefined ? members : { ...members, ulid: range };
      return stored
        .find(filter, { projection: PROJECTION, ...reads, signal })
        .sort({ ulid: direction })
        .limit(window.limit)
        .toArray();
    }
    const foreignFirst = window.oldestFirst ? foreign.below : foreign.above;
    // Newer than `beforeUlid`, older than `afterUlid`; the created_at bounds stay in `members`.
    const inRange = keysWithin(foreign.keys, { after: window.beforeUlid, before: window.afterUlid });
    // Unfiltered, only the first `limit` of them in the window's order can be in it.
    const keys =
      Object.keys(members).length > 0
        ? inRange
        : window.oldestFirst
          ? inRange.slice(0, window.limit)
          : inRange.slice(-window.limit);
    const [own, theirs] = await Promise.all([
      ownWindow(criteria, window, foreignFirst > 0, signal),
      keys.length === 0
        ? []
        : stored
            .find(amongKeys(members, keys), { projection: PROJECTION, ...reads, signal })
            .sort({ ulid: direction })
            .limit(window.limit)
            .toArray(),
    ]);
    return mergeWindow(own, theirs, listedUlid, direction, window.limit);
  }

  return storedWindow;
}
