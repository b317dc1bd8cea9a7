import { canReadAllOrders, canReadOrder, requireCustomer } from '../auth/order-access';
import type { Viewer } from '../auth/viewer';
import type { AppContext } from '../context';
import type { OrderDoc } from '../db/documents';
import { fingerprintOf, type LiveOrderRequest } from '../db/orders/live-orders';
import type { LiveOrderEvent, LiveOrderStream } from '../db/orders/live-order-stream';
import { matchesOrderCriteria, type OrderCriteria } from '../db/orders/order-repository';
import { badUserInput, forbidden, orderNotFound, serviceUnavailable, type FieldErrors } from '../errors';
import { canonicalUlid } from '../format/ulid';
import { builder } from './builder';
import { Order } from './order';
import { criteriaOf, OrderFilter, type OrderFilterInput } from './order-list';

/**
 * Live orders over GraphQL subscriptions (served as Server-Sent Events by Yoga): the same `Order`
 * type and the same visibility rules as the queries, events from src/db/orders/live-orders.ts. A stream
 * ends with one last error event (the token expired, the server shuts down, the reader fell
 * behind) and then completes.
 */

type Customer = Extract<Viewer, { kind: 'customer' }>;

function openStream(
  ctx: AppContext,
  viewer: Customer,
  request: Omit<LiveOrderRequest, 'customerId' | 'endsAt'>,
) {
  if (!ctx.openLiveStream) throw serviceUnavailable();
  return ctx.openLiveStream({ ...request, customerId: viewer.customerId, endsAt: viewer.expiresAt });
}

function filterCriteria(
  filter: OrderFilterInput | null | undefined,
  errors: FieldErrors = {},
): OrderCriteria {
  const criteria = criteriaOf(filter, errors);
  if (Object.keys(errors).length > 0) throw badUserInput(errors);
  return criteria;
}

/** Each event is an order, or the error that ends the stream (its last event). */
function orderOf(event: LiveOrderEvent): OrderDoc {
  if ('ended' in event) throw event.ended;
  return event.order;
}

builder.subscriptionType({
  description: 'Live orders: each event is an order as it is now. Send `Accept: text/event-stream`.',
});

builder.subscriptionFields((t) => ({
  order: t.field({
    type: Order,
    description:
      'One order by its ULID: first as it is now, then each time its status, amounts or items change. ' +
      'The same rules as the query `order`: UNAUTHENTICATED, FORBIDDEN, NOT_FOUND.',
    args: { ulid: t.arg.id({ required: true, description: 'The `ulid` of the order.' }) },
    subscribe: async (_root, args, ctx): Promise<LiveOrderStream> => {
      const viewer = requireCustomer(await ctx.viewer());
      const ulid = canonicalUlid(String(args.ulid));
      if (ulid === null) throw orderNotFound();
      // Open before the read, so a change between the two is not lost (the newer state wins).
      const stream = await openStream(ctx, viewer, {
        route: { ulid },
        matches: (order) => canReadOrder(viewer, order),
      });
      try {
        const order = await ctx.orders.findByUlid(ulid);
        if (!order) throw orderNotFound();
        if (!canReadOrder(viewer, order)) throw forbidden();
        stream.offer(order, fingerprintOf(order));
        return stream;
      } catch (error) {
        await stream.return?.();
        throw error;
      }
    },
    resolve: orderOf,
  }),
  viewerOrders: t.field({
    type: Order,
    description:
      "Every new or changed order of the token's customer (as `viewer.orders`, whose filter it takes). " +
      'UNAUTHENTICATED without a token.',
    args: { filter: t.arg({ type: OrderFilter, required: false }) },
    subscribe: async (_root, args, ctx) => {
      const viewer = requireCustomer(await ctx.viewer());
      const errors: FieldErrors = {};
      if (args.filter?.customerId != null) {
        errors['filter.customerId'] = [
          'The customerId filter is only accepted on orders, not on viewerOrders.',
        ];
      }
      const criteria = { ...filterCriteria(args.filter, errors), customerId: viewer.customerId };
      return openStream(ctx, viewer, {
        route: { customerId: viewer.customerId },
        matches: (order) => matchesOrderCriteria(criteria, order),
      });
    },
    resolve: orderOf,
  }),
  orders: t.field({
    type: Order,
    description:
      "Every customer's new and changed orders that match the filter (as the query `orders`), for " +
      'tokens with the `orders:read:all` scope. UNAUTHENTICATED without a token, FORBIDDEN without the scope.',
    args: { filter: t.arg({ type: OrderFilter, required: false }) },
    subscribe: async (_root, args, ctx) => {
      const viewer = requireCustomer(await ctx.viewer());
      if (!canReadAllOrders(viewer)) throw forbidden();
      const criteria = filterCriteria(args.filter);
      return openStream(ctx, viewer, {
        route: criteria.customerId === undefined ? 'all' : { customerId: criteria.customerId },
        matches: (order) => matchesOrderCriteria(criteria, order),
      });
    },
    resolve: orderOf,
  }),
}));
