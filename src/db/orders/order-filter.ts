import type { Document, Filter } from 'mongodb';
import { encodeTime } from 'ulid';
import { INDEXES } from '../mongo';
import type { FulfillmentStatus, OrderDoc, PaymentStatus } from '../documents';
import type { KeyShape } from '../foreign-keys';

/* Which orders a list shows, as a filter and in memory, and how a stored order is keyed and listed. */

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
export const PROJECTION = {} as const;
const ULID_SHAPE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export const ORDER_KEYS: KeyShape<string> = {
  field: 'ulid',
  isOwnKey: (key) => typeof key === 'string' && ULID_SHAPE.test(key),
  valueOf: (raw) =>
    typeof raw === 'string' && ULID_SHAPE.test(raw.toUpperCase()) ? raw.toUpperCase() : undefined,
};

export type Raw = Document;
/** The ULID a stored order is listed by: its own-shaped `_id`, or else its `ulid`. */
export const listedUlid = (raw: Raw): string =>
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
export const onKeys = (condition: unknown) => ({ _id: condition }) as Filter<Document>;

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

export function indexLeadingWith(field: keyof OrderDoc): string {
  const name = INDEXES.orders.find((index) => Object.keys(index.key)[0] === field)?.name;
  if (name === undefined) throw new Error(`INDEXES.orders has no index leading with ${field}`);
  return name;
}
