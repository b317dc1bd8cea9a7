import { FULFILLMENT_STATUSES, PAYMENT_STATUSES, type OrderDoc, type OrderItemDoc } from '../db/documents';
import { canReadOrder, requireCustomer } from '../auth/order-access';
import type { AppContext } from '../context';
import { forbidden, orderNotFound, unauthenticated } from '../errors';
import { statusEnumName } from '../format/status';
import { builder } from './builder';
import { brandedNodes, databaseIdOf } from './global-id';
import { OrderMoney } from './money';
import { canonicalUlid } from '../format/ulid';

function enumValues<T extends string>(values: readonly T[]) {
  return Object.fromEntries(values.map((value) => [statusEnumName(value), { value }])) as Record<
    Uppercase<T>,
    { value: T }
  >;
}

export const FulfillmentStatus = builder.enumType('FulfillmentStatus', {
  description: 'Fulfilment state of an order (`fulfillment_status` on /api/v1, in lower case).',
  values: enumValues(FULFILLMENT_STATUSES),
});

export const PaymentStatus = builder.enumType('PaymentStatus', {
  description: 'Payment state of an order (`payment_status` on /api/v1, in lower case).',
  values: enumValues(PAYMENT_STATUSES),
});

/** An item travels with its order: its currency and its visibility are the order's. */
interface OrderItemParent {
  item: OrderItemDoc;
  order: OrderDoc;
}

/**
 * A loaded entry that is an error. graphql-js reports an Error *value* at its own list index, so
 * `nodes` nulls just that entry; a rejected promise would fail Pothos's Promise.all over the
 * batch and null the whole list.
 */
function failedEntry<T>(error: Error): T {
  return error as unknown as T;
}

/**
 * The one visibility rule for orders, used by `order`, `node` and `nodes` (and so by /api/v1):
 * authentication first, then ownership or the orders:read:all scope. Per-entry errors let
 * `nodes` report each ID on its own.
 */
async function visibleOrders(
  ctx: AppContext,
  load: () => Promise<OrderDoc[]>,
): Promise<{ orders: OrderDoc[]; denied: Error | null; check: (order: OrderDoc) => OrderDoc | Error }> {
  const viewer = await ctx.viewer();
  if (viewer.kind !== 'customer')
    return { orders: [], denied: unauthenticated(), check: () => unauthenticated() };
  const orders = await load();
  return { orders, denied: null, check: (order) => (canReadOrder(viewer, order) ? order : forbidden()) };
}

export const OrderItem = builder.objectRef<OrderItemParent>('OrderItem');
builder.node(OrderItem, {
  description: 'One line of an order.',
  id: { resolve: ({ item }) => item.id },
  loadMany: async (ids, ctx) => {
    const itemIds = ids.map(databaseIdOf);
    const { orders, denied, check } = await visibleOrders(ctx, () => ctx.orders.findByItemIds(itemIds));
    if (denied) return ids.map(() => failedEntry<OrderItemParent>(denied));
    const parents = new Map<number, OrderItemParent | Error>();
    for (const order of orders) {
      const visible = check(order);
      for (const item of order.items)
        parents.set(item.id, visible instanceof Error ? visible : { item, order });
    }
    return brandedNodes(
      'OrderItem',
      itemIds.map((id) => {
        const entry = parents.get(id);
        return entry instanceof Error ? failedEntry<OrderItemParent>(entry) : (entry ?? null);
      }),
    );
  },
  fields: (t) => ({
    databaseId: t.int({
      description: 'Numeric identifier (`id` on /api/v1).',
      resolve: ({ item }) => item.id,
    }),
    productName: t.string({ resolve: ({ item }) => item.product_name }),
    variantName: t.string({ resolve: ({ item }) => item.variant_name }),
    quantity: t.int({ resolve: ({ item }) => item.quantity }),
    unitPrice: t.field({
      type: OrderMoney,
      resolve: ({ item, order }) => ({ amount: item.unit_price, currency: order.currency }),
    }),
    totalPrice: t.field({
      type: OrderMoney,
      resolve: ({ item, order }) => ({ amount: item.total_price, currency: order.currency }),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: ({ item }) => item.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: ({ item }) => item.updated_at }),
  }),
});

export const Order = builder.objectRef<OrderDoc>('Order');
builder.node(Order, {
  description: 'A customer order. Visible to its customer and to tokens with the `orders:read:all` scope.',
  id: { resolve: (order) => order.id },
  loadMany: async (ids, ctx) => {
    const orderIds = ids.map(databaseIdOf);
    const { orders, denied, check } = await visibleOrders(ctx, () => ctx.orders.findByIds(orderIds));
    if (denied) return ids.map(() => failedEntry<OrderDoc>(denied));
    const found = new Map(orders.map((order) => [order.id, check(order)]));
    return brandedNodes(
      'Order',
      orderIds.map((id) => {
        const entry = found.get(id);
        return entry instanceof Error ? failedEntry<OrderDoc>(entry) : (entry ?? null);
      }),
    );
  },
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'Numeric identifier (`id` on /api/v1).' }),
    ulid: t.exposeID('ulid', { description: 'Identifier used in the path of `GET /api/v1/orders/{order}`.' }),
    orderNumber: t.exposeString('order_number', { description: 'Human-readable order number.' }),
    fulfillmentStatus: t.field({ type: FulfillmentStatus, resolve: (order) => order.fulfillment_status }),
    paymentStatus: t.field({ type: PaymentStatus, resolve: (order) => order.payment_status }),
    subtotal: t.field({ type: OrderMoney, resolve: (o) => ({ amount: o.subtotal, currency: o.currency }) }),
    conversionFees: t.field({
      type: OrderMoney,
      resolve: (o) => ({ amount: o.conversion_fees, currency: o.currency }),
    }),
    total: t.field({ type: OrderMoney, resolve: (o) => ({ amount: o.total, currency: o.currency }) }),
    currency: t.exposeString('currency', { description: 'Currency code of the order.' }),
    items: t.field({ type: [OrderItem], resolve: (order) => order.items.map((item) => ({ item, order })) }),
    createdAt: t.field({ type: 'DateTime', resolve: (order) => order.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (order) => order.updated_at }),
  }),
});

builder.queryField('order', (t) =>
  t.field({
    type: Order,
    nullable: true,
    description:
      'One order by its ULID (case-insensitive). Needs a bearer token: UNAUTHENTICATED without one, ' +
      "FORBIDDEN for another customer's order, NOT_FOUND when there is no such order.",
    args: { ulid: t.arg.id({ required: true, description: 'The `ulid` of the order.' }) },
    resolve: async (_root, args, ctx) => {
      const viewer = requireCustomer(await ctx.viewer());
      const ulid = canonicalUlid(String(args.ulid));
      const order = ulid === null ? null : await ctx.orders.findByUlid(ulid);
      if (!order) throw orderNotFound();
      if (!canReadOrder(viewer, order)) throw forbidden();
      return order;
    },
  }),
);
