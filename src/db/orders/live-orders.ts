import { createHash } from 'node:crypto';
import type { GraphQLError } from 'graphql';
import { streamLifetimeReached, tokenExpired, tooManySubscriptions } from '../../errors';
import { readOrder } from '../document-reading';
import type { OrderDoc } from '../documents';
import { createLiveOrderStream, type LiveOrderStream } from './live-order-stream';

/**
 * Live orders: the fan-out of the orders change feed (src/db/change-feed.ts) to the GraphQL
 * subscriptions. The hub listens to the feed once; per batch it matches each changed order in
 * memory against the subscribers that could want it (those of that order, of its customer, and
 * the support desk's filtered lists), so the database work per interval is the feed's one read,
 * whatever the number of subscribers. Deletions are not events.
 */

/** The one thing the hub needs of a change feed. */
export interface OrderChangeSource {
  subscribe(
    listener: (batch: { changes: { _id: unknown; document: OrderDoc | null }[] }) => Promise<void> | void,
  ): () => void;
}

export interface LiveOrderLimits {
  /** Open subscriptions per customer (the token's `sub`). */
  perCustomer: number;
  /** Open subscriptions on this instance. */
  perInstance: number;
  /** Open subscriptions per client address (the request's `address`); 0 or unset: no bound. */
  perAddress?: number;
  /** How long a changed order may wait unread before its reader's stream ends (default 5 s). */
  maxLagMs?: number;
  /** Distinct changed orders waiting for one reader at most (memory; default 5,000). */
  queuedOrders?: number;
  /** Longest a stream stays open, whatever its token says (default 1 h); it ends 0–10 % sooner. */
  maxLifetimeMs?: number;
}

/** Which subscribers a changed order is offered to: one order's, one customer's, or every list's. */
export type LiveOrderRoute = { ulid: string } | { customerId: string } | 'all';

export interface LiveOrderRequest {
  /** Whose bound it counts against: the token's `sub`. */
  customerId: string;
  route: LiveOrderRoute;
  /** The whole rule (visibility and filter) an order of the route must pass to be sent. */
  matches: (order: OrderDoc) => boolean;
  /** When the token expires (ms since the epoch): the stream ends then with UNAUTHENTICATED. */
  endsAt?: number;
  /** The client's address (src/limits/client-key.ts), for the per-address bound. */
  address?: string;
  /** Runs once when the stream ends, however it ends (e.g. gives back a fleet-wide slot). */
  onEnd?: () => void;
}

/** What changes an event: its states, amounts and lines; not `updated_at` alone. */
export function fingerprintOf(order: OrderDoc): string {
  const fields = [
    order.fulfillment_status,
    order.payment_status,
    order.currency,
    order.subtotal,
    order.conversion_fees,
    order.total,
    order.items,
  ];
  return createHash('sha1').update(JSON.stringify(fields)).digest('base64url');
}

/** How long a changed order may wait for its reader: a support desk this far behind resubscribes. */
const MAX_LAG_MS = 5_000;
/** Distinct orders one reader may have waiting: ten of the change feed's default batches. */
const QUEUED_ORDERS = 5_000;
const MAX_LIFETIME_MS = 3_600_000;
/** Streams opened together (after a restart) do not all end, and come back, together. */
const LIFETIME_JITTER = 0.1;
/** What a stream ended by its lifetime is told: subscribe again after this many seconds. */
const RESUBSCRIBE_AFTER_S = 1;

/** setTimeout's longest delay; a later expiry re-arms. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Counts per key, for the bounds per customer and per address. */
function createTally() {
  const counts = new Map<string, number>();
  return {
    of: (key: string) => counts.get(key) ?? 0,
    add: (key: string) => void counts.set(key, (counts.get(key) ?? 0) + 1),
    remove(key: string) {
      const left = (counts.get(key) ?? 1) - 1;
      if (left > 0) counts.set(key, left);
      else counts.delete(key);
    },
  };
}

/** When a stream ends, and with which error: its token's expiry, or its lifetime, whichever is first. */
function endOf(endsAt: number | undefined, maxLifetimeMs: number): { at: number; error: () => GraphQLError } {
  const lifetimeEnd = Date.now() + maxLifetimeMs * (1 - LIFETIME_JITTER * Math.random());
  if (endsAt !== undefined && endsAt <= lifetimeEnd) return { at: endsAt, error: tokenExpired };
  return { at: lifetimeEnd, error: () => streamLifetimeReached(RESUBSCRIBE_AFTER_S) };
}

function addTo<K, V>(index: Map<K, Set<V>>, key: K, value: V): () => void {
  let set = index.get(key);
  if (!set) index.set(key, (set = new Set()));
  set.add(value);
  return () => {
    set.delete(value);
    if (set.size === 0) index.delete(key);
  };
}

/**
 * `onFailure` hears of an order the hub could not offer (a document no rule here expected): it is
 * skipped, so one document never holds up the feed (which hands a failed batch on again).
 */
export function createLiveOrders(
  source: OrderChangeSource,
  limits: LiveOrderLimits,
  onFailure: (error: unknown) => void = () => undefined,
) {
  const byUlid = new Map<string, Set<Subscriber>>();
  const byCustomer = new Map<string, Set<Subscriber>>();
  const lists = new Set<Subscriber>();
  const open = new Set<Subscriber>();
  const perCustomer = createTally();
  const perAddress = createTally();
  const bounds = { maxLagMs: limits.maxLagMs ?? MAX_LAG_MS, maxQueued: limits.queuedOrders ?? QUEUED_ORDERS };

  interface Subscriber {
    stream: LiveOrderStream;
    matches: (order: OrderDoc) => boolean;
  }

  const offer = (order: OrderDoc) => {
    const candidates = [
      ...(byUlid.get(order.ulid) ?? []),
      ...(byCustomer.get(order.customer_id) ?? []),
      ...lists,
    ];
    if (candidates.length === 0) return;
    const print = fingerprintOf(order);
    for (const subscriber of candidates) if (subscriber.matches(order)) subscriber.stream.offer(order, print);
  };

  const stopListening = source.subscribe(({ changes }) => {
    for (const { document } of changes) {
      if (!document) continue;
      try {
        // Read as every query reads it: another writer's shapes look the same in events as in answers.
        offer(readOrder(document as unknown as Parameters<typeof readOrder>[0]));
      } catch (error) {
        onFailure(error);
      }
    }
  });

  const refuseOverBounds = ({ customerId, address }: LiveOrderRequest) => {
    if (open.size >= limits.perInstance) {
      throw tooManySubscriptions(
        `This server holds its limit of ${limits.perInstance} live subscriptions: subscribe again in a moment.`,
      );
    }
    if (perCustomer.of(customerId) >= limits.perCustomer) {
      throw tooManySubscriptions(
        `At most ${limits.perCustomer} live subscriptions per customer may be open at once: end one first.`,
      );
    }
    const { perAddress: addressBound = 0 } = limits;
    if (address !== undefined && addressBound > 0 && perAddress.of(address) >= addressBound) {
      throw tooManySubscriptions(
        `At most ${addressBound} live subscriptions per client address may be open at once: end one first.`,
      );
    }
  };

  return {
    /** A new subscription's stream; TOO_MANY_SUBSCRIPTIONS past a bound. */
    open(request: LiveOrderRequest): LiveOrderStream {
      refuseOverBounds(request);
      const { customerId, address } = request;
      perCustomer.add(customerId);
      if (address !== undefined) perAddress.add(address);
      let timer: NodeJS.Timeout | undefined;
      let unroute = () => {};
      const stream = createLiveOrderStream(bounds, () => {
        clearTimeout(timer);
        unroute();
        open.delete(subscriber);
        perCustomer.remove(customerId);
        if (address !== undefined) perAddress.remove(address);
        request.onEnd?.();
      });
      const subscriber: Subscriber = { stream, matches: request.matches };
      const { route } = request;
      if (route === 'all') {
        lists.add(subscriber);
        unroute = () => void lists.delete(subscriber);
      } else {
        unroute =
          'ulid' in route
            ? addTo(byUlid, route.ulid, subscriber)
            : addTo(byCustomer, route.customerId, subscriber);
      }
      open.add(subscriber);
      const end = endOf(request.endsAt, limits.maxLifetimeMs ?? MAX_LIFETIME_MS);
      const arm = () => {
        const left = end.at - Date.now();
        if (left <= 0) stream.end(end.error());
        else timer = setTimeout(arm, Math.min(left, LONGEST_TIMER_MS)).unref();
      };
      arm();
      return stream;
    },

    /** Ends every open stream with `error` as its last event; returns how many. */
    endAll(error: GraphQLError): number {
      for (const { stream } of open) stream.end(error);
      return open.size;
    },

    /** Open subscriptions on this instance. */
    count(): number {
      return open.size;
    },

    /** Stops listening to the feed (the streams are ended by endAll first). */
    close(): void {
      stopListening();
    },
  };
}

export type LiveOrders = ReturnType<typeof createLiveOrders>;
