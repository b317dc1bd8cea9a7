import type { Db, Document, Filter, IndexDescription } from 'mongodb';
import { encodeTime } from 'ulid';
import type { CallOptions, ReadLimits } from '../guards/deadline';
import { INDEXES, PRIMARY_KEY, ULID_FIELD_INDEX } from '../mongo';
import { walkInIdOrder } from '../id-order-walk';
import { createIndexKeeper, type IndexEvent } from '../guards/index-keeper';
import type { FulfillmentStatus, OrderDoc, PaymentStatus } from '../documents';
import { fillWindow, readEach, readOrder, type UnreadableReport } from '../document-reading';
import { amongKeys, foreignKeyProbe, keysWithin, mergeWindow, type KeyShape } from '../foreign-keys';
import { orderRecord } from '../records';

/** Which orders a list shows. Every member is an exact match; absent means "any". */
export interface OrderCriteria {
  customerId?: string;
  paymentStatuses?: readonly PaymentStatus[];
  fulfillmentStatuses?: readonly FulfillmentStatus[];
  /** Upper-case ISO 4217 code. */
  currency?: string;
  /** Exclusive bounds on created_at. */
  createdAfter?: Date;
  createdBefore?: Date;
}

/** A keyset window over orders, newest (highest ULID) first. */
export interface OrderWindow {
  /** Orders older than this ULID. */
  afterUlid?: string;
  /** Orders newer than this ULID. */
  beforeUlid?: string;
  limit: number;
  /** Walk from the oldest end (for `last`/`before`); rows come back oldest first. */
  oldestFirst: boolean;
}

/** `_id` stays: a ULID-shaped one must be the ulid (src/db/document-reading.ts). */
const PROJECTION = {} as const;
const ULID_SHAPE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

const ORDER_KEYS: KeyShape<string> = {
  field: 'ulid',
  isOwnKey: (key) => typeof key === 'string' && ULID_SHAPE.test(key),
  valueOf: (raw) =>
    typeof raw === 'string' && ULID_SHAPE.test(raw.toUpperCase()) ? raw.toUpperCase() : undefined,
};

type Raw = Document;
/** The ULID a stored order is listed by: its own-shaped `_id`, or else its `ulid`. */
const listedUlid = (raw: Raw): string =>
  ORDER_KEYS.isOwnKey(raw._id) ? (raw._id as string) : (ORDER_KEYS.valueOf(raw.ulid) ?? '');

const MAX_ULID_TIME = 2 ** 48 - 1;
const LOWEST_RANDOM = '0'.repeat(16);

/** The smallest ULID minted at or after `ms` (clamped to the range a ULID can hold). */
function ulidFloor(ms: number): string {
  return encodeTime(Math.min(Math.max(ms, 0), MAX_ULID_TIME), 10) + LOWEST_RANDOM;
}

/**
 * A ULID is minted when its order is created and created_at is that instant cut to the second
 * (test/seed/invariants.ts checks it), so a created_at range is also a ULID range. Adding it lets
 * the `ulid` indexes bound a date filter instead of walking past every newer order; the exact
 * created_at predicate stays, so the ULID range only has to be a superset.
 */
function ulidRange(criteria: OrderCriteria, window?: OrderWindow): Record<string, string> {
  const range: Record<string, string> = {};
  if (criteria.createdAfter)
    range.$gte = ulidFloor(Math.floor(criteria.createdAfter.getTime() / 1000) * 1000 + 1000);
  if (criteria.createdBefore)
    range.$lt = ulidFloor(Math.ceil(criteria.createdBefore.getTime() / 1000) * 1000);
  if (window?.afterUlid !== undefined && (range.$lt === undefined || window.afterUlid < range.$lt))
    range.$lt = window.afterUlid;
  if (window?.beforeUlid !== undefined) range.$gt = window.beforeUlid;
  return range;
}

/** Only exact matches on values we validated: user text never becomes a pattern or an operator. */
export function orderFilter(criteria: OrderCriteria, window?: OrderWindow): Filter<OrderDoc> {
  const filter: Filter<OrderDoc> = {};
  if (criteria.customerId !== undefined) filter.customer_id = criteria.customerId;
  const ulid = ulidRange(criteria, window);
  // `_id` is the ULID (src/db/documents.ts): a range on it bounds the primary key walk.
  if (Object.keys(ulid).length > 0) filter._id = ulid;
  if (criteria.paymentStatuses) filter.payment_status = { $in: [...criteria.paymentStatuses] };
  if (criteria.fulfillmentStatuses) filter.fulfillment_status = { $in: [...criteria.fulfillmentStatuses] };
  if (criteria.currency !== undefined) filter.currency = criteria.currency;
  const created: { $gt?: Date; $lt?: Date } = {};
  if (criteria.createdAfter) created.$gt = criteria.createdAfter;
  if (criteria.createdBefore) created.$lt = criteria.createdBefore;
  if (Object.keys(created).length > 0) filter.created_at = created;
  return filter;
}

/** A condition on `_id`, which the driver's types take for an ObjectId. */
const onKeys = (condition: unknown) => ({ _id: condition }) as Filter<Document>;

/**
 * The same criteria as `orderFilter`, decided in memory for one order (the live subscriptions,
 * src/db/orders/live-orders.ts, match the feed's documents with it): the two sit together so they cannot
 * drift. A created_at that is not a date matches no created_at bound, as in the database.
 */
export function matchesOrderCriteria(criteria: OrderCriteria, order: OrderDoc): boolean {
  if (criteria.customerId !== undefined && order.customer_id !== criteria.customerId) return false;
  if (criteria.paymentStatuses && !criteria.paymentStatuses.includes(order.payment_status)) return false;
  if (criteria.fulfillmentStatuses && !criteria.fulfillmentStatuses.includes(order.fulfillment_status))
    return false;
  if (criteria.currency !== undefined && order.currency !== criteria.currency) return false;
  if (criteria.createdAfter || criteria.createdBefore) {
    const created = order.created_at instanceof Date ? order.created_at.getTime() : Number.NaN;
    if (criteria.createdAfter && !(created > criteria.createdAfter.getTime())) return false;
    if (criteria.createdBefore && !(created < criteria.createdBefore.getTime())) return false;
  }
  return true;
}

/** Orders an order list walks newest-first before it reads its filter's index instead. */
export const RECENT_WALK = 2_000;

function indexLeadingWith(field: keyof OrderDoc): string {
  const name = INDEXES.orders.find((index) => Object.keys(index.key)[0] === field)?.name;
  if (name === undefined) throw new Error(`INDEXES.orders has no index leading with ${field}`);
  return name;
}

export interface OrderRepositoryOptions extends ReadLimits {
  /** Told of each stored order that cannot be served (it is left out). */
  onUnreadable?: UnreadableReport;
  /** Told when an index a list names is found missing, and when creating it again ends. */
  onIndexEvent?: (event: IndexEvent) => void;
}

export function createOrderRepository(
  db: Db,
  { maxTimeMS, onUnreadable, onIndexEvent }: OrderRepositoryOptions = {},
) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const orders = db.collection<OrderDoc>('orders');
  /** The same collection, read as stored: every document goes through readOrder. */
  const stored = db.collection('orders');
  const foreignKeys = foreignKeyProbe(stored, ORDER_KEYS, reads);
  const read = (rows: Raw[]) => readEach('orders', rows, readOrder, onUnreadable);
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

  return {
    /**
     * `ulid` must already be canonical (upper case). By the primary key (`_id` = ulid); an order
     * another writer keyed its own way, by the `ulid` field's index.
     */
    async findByUlid(ulid: string, { signal }: CallOptions = {}): Promise<OrderDoc | null> {
      const own = await stored.findOne(onKeys(ulid), { projection: PROJECTION, ...reads, signal });
      const found =
        own ??
        (await stored.findOne(
          { ulid },
          { projection: PROJECTION, hint: ULID_FIELD_INDEX, ...reads, signal },
        ));
      return found === null ? null : (read([found])[0] ?? null);
    },

    async findByIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<OrderDoc[]> {
      return read(
        await stored.find({ id: { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal }).toArray(),
      );
    },

    async findByItemIds(itemIds: readonly number[], { signal }: CallOptions = {}): Promise<OrderDoc[]> {
      return read(
        await stored
          .find({ 'items.id': { $in: [...itemIds] } }, { projection: PROJECTION, ...reads, signal })
          .toArray(),
      );
    },

    /**
     * Keyset paging on `_id` (the ULID), items embedded. DocumentDB orders only by the primary key,
     * so a list narrowed by an indexed member (a customer, states) has two plans, each cheap for
     * one kind of list: walk the newest orders and filter (a customer with many orders), or read
     * the member's index and sort what it finds (a customer with few). The walk goes first,
     * bounded to RECENT_WALK orders; when that does not fill the window, the index does. Orders
     * other writers keyed their own way are merged in by their ULID (src/db/foreign-keys.ts).
     */
    async findWindow(
      criteria: OrderCriteria,
      window: OrderWindow,
      { signal }: CallOptions = {},
    ): Promise<OrderDoc[]> {
      return fillWindow(
        window,
        (part) => storedWindow(criteria, part, signal),
        read,
        (part, row, limit) => ({
          ...part,
          ...(part.oldestFirst ? { beforeUlid: listedUlid(row) } : { afterUlid: listedUlid(row) }),
          limit,
        }),
      );
    },

    async countMatching(criteria: OrderCriteria, { signal }: CallOptions = {}): Promise<number> {
      // Exact, never estimatedDocumentCount: DocumentDB estimates from planner statistics.
      return orders.countDocuments(orderFilter(criteria), { ...reads, signal });
    },

    async count({ signal }: CallOptions = {}): Promise<number> {
      return orders.countDocuments({}, { ...reads, signal });
    },

    async insertMany(docs: OrderDoc[]): Promise<void> {
      if (docs.length > 0) await orders.insertMany(docs.map(orderRecord), { ordered: false });
    },
  };
}

export type OrderRepository = ReturnType<typeof createOrderRepository>;
