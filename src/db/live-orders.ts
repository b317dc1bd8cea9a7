import { createHash } from 'node:crypto';
import type { GraphQLError } from 'graphql';
import { tokenExpired, tooManySubscriptions } from '../errors';
import { readOrder } from './document-reading';
import type { OrderDoc } from './documents';
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
  /** Distinct changed orders waiting for one reader before its stream ends (default 100). */
  queuedOrders?: number;
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

/**
 * Changed orders one reader may have waiting: an order page's stream has one order, a customer's
 * a handful; a support desk that falls this far behind resubscribes.
 */
const QUEUED_ORDERS = 100;

/** setTimeout's longest delay; a later expiry re-arms. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

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
  const perCustomer = new Map<string, number>();

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

  return {
    /** A new subscription's stream; TOO_MANY_SUBSCRIPTIONS past a bound. */
    open(request: LiveOrderRequest): LiveOrderStream {
      if (open.size >= limits.perInstance) {
        throw tooManySubscriptions(
          `This server holds its limit of ${limits.perInstance} live subscriptions: subscribe again in a moment.`,
        );
      }
      const ofCustomer = perCustomer.get(request.customerId) ?? 0;
      if (ofCustomer >= limits.perCustomer) {
        throw tooManySubscriptions(
          `At most ${limits.perCustomer} live subscriptions per customer may be open at once: end one first.`,
        );
      }
      perCustomer.set(request.customerId, ofCustomer + 1);
      let timer: NodeJS.Timeout | undefined;
      let unroute = () => {};
      const stream = createLiveOrderStream(limits.queuedOrders ?? QUEUED_ORDERS, () => {
        clearTimeout(timer);
        unroute();
        open.delete(subscriber);
        const left = (perCustomer.get(request.customerId) ?? 1) - 1;
        if (left > 0) perCustomer.set(request.customerId, left);
        else perCustomer.delete(request.customerId);
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
      const { endsAt } = request;
      if (endsAt !== undefined) {
        const arm = () => {
          const left = endsAt - Date.now();
          if (left <= 0) stream.end(tokenExpired());
          else timer = setTimeout(arm, Math.min(left, LONGEST_TIMER_MS)).unref();
        };
        arm();
      }
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
