import { resolveCursorConnection, type ResolveCursorConnectionArgs } from '@pothos/plugin-relay';
import { canReadAllOrders, requireCustomer } from '../auth/order-access';
import {
  DEFAULT_CONNECTION_SIZE,
  isStorableText,
  MAX_CONNECTION_SIZE,
  normaliseText,
} from '../catalog/product-query';
import type { AppContext } from '../context';
import type { OrderDoc } from '../db/documents';
import type { OrderCriteria } from '../db/orders/order-repository';
import { forbidden, type FieldErrors } from '../errors';
import { builder } from './builder';
import { checkConnectionArgs, withNullCursors, type ConnectionArgs } from './connection-args';
import { FulfillmentStatus, Order, PaymentStatus } from './order';
import { decodeKeyCursor, encodeCursor, fingerprintOf } from './product-cursor';
import { ULID_PATTERN } from '../format/ulid';

/**
 * Order lists: the caller's own (`viewer.orders`) and everyone's for support (`orders`). Both walk
 * the same keyset on `ulid`, newest first, with the visibility rules of src/auth/order-access.ts.
 */

const ULID_KEY = new RegExp(ULID_PATTERN);
const CURRENCY_CODE = /^[A-Za-z]{3}$/;
const MAX_CUSTOMER_ID_LENGTH = 255;

export interface OrderFilterInput {
  paymentStatus?: OrderDoc['payment_status'][] | null;
  fulfillmentStatus?: OrderDoc['fulfillment_status'][] | null;
  createdAfter?: Date | null;
  createdBefore?: Date | null;
  currency?: string | null;
  customerId?: string | null;
}

export const OrderFilter = builder.inputType('OrderFilter', {
  description:
    'Narrows an order list. Every given member must match; a list member matches any of its values.',
  fields: (t) => ({
    paymentStatus: t.field({ type: [PaymentStatus], description: 'Any of these payment states; not empty.' }),
    fulfillmentStatus: t.field({
      type: [FulfillmentStatus],
      description: 'Any of these fulfilment states; not empty.',
    }),
    createdAfter: t.field({ type: 'DateTime', description: 'Created strictly after this instant.' }),
    createdBefore: t.field({ type: 'DateTime', description: 'Created strictly before this instant.' }),
    currency: t.string({ description: 'Three-letter currency code, case-insensitive.' }),
    customerId: t.string({
      description:
        'Orders of this customer (the `sub` of their tokens). Only on `orders`; `viewer.orders` rejects it.',
    }),
  }),
});

function distinctSorted<T extends string>(errors: FieldErrors, member: string, values: T[]): T[] {
  if (values.length === 0) errors[`filter.${member}`] = [`The ${member} filter must not be empty.`];
  return [...new Set(values)].sort();
}

/** The filter as repository criteria; BAD_USER_INPUT lists every member that is wrong. */
export function criteriaOf(filter: OrderFilterInput | null | undefined, errors: FieldErrors): OrderCriteria {
  const criteria: OrderCriteria = {};
  if (!filter) return criteria;
  if (filter.paymentStatus)
    criteria.paymentStatuses = distinctSorted(errors, 'paymentStatus', filter.paymentStatus);
  if (filter.fulfillmentStatus)
    criteria.fulfillmentStatuses = distinctSorted(errors, 'fulfillmentStatus', filter.fulfillmentStatus);
  if (filter.createdAfter) criteria.createdAfter = filter.createdAfter;
  if (filter.createdBefore) criteria.createdBefore = filter.createdBefore;
  const currency = normaliseText(filter.currency);
  if (currency !== undefined) {
    if (CURRENCY_CODE.test(currency)) criteria.currency = currency.toUpperCase();
    else errors['filter.currency'] = ['The currency filter must be a three-letter currency code.'];
  }
  const customerId = normaliseText(filter.customerId);
  if (customerId !== undefined) {
    if (!isStorableText(customerId))
      errors['filter.customerId'] = [
        'The customerId filter must be text without NUL characters or unpaired surrogates.',
      ];
    else if (customerId.length <= MAX_CUSTOMER_ID_LENGTH) criteria.customerId = customerId;
    else
      errors['filter.customerId'] = [
        `The customerId filter must not be longer than ${MAX_CUSTOMER_ID_LENGTH} characters.`,
      ];
  }
  return criteria;
}

type OrderListQuery = 'viewer.orders' | 'orders';

async function loadOrderConnection(
  ctx: AppContext,
  query: OrderListQuery,
  criteria: OrderCriteria,
  args: ConnectionArgs,
  errors: FieldErrors,
) {
  checkConnectionArgs(args, errors);
  const fingerprint = fingerprintOf([query, criteria]);
  const ulidOf = (cursor: string, argument: 'after' | 'before') =>
    decodeKeyCursor(cursor, fingerprint, argument, ULID_KEY);
  const connection = await resolveCursorConnection(
    {
      args,
      toCursor: (order: OrderDoc) => encodeCursor(fingerprint, order.ulid),
      defaultSize: DEFAULT_CONNECTION_SIZE,
      maxSize: MAX_CONNECTION_SIZE,
    },
    ({ after, before, limit, inverted }: ResolveCursorConnectionArgs) =>
      ctx.orders.findWindow(criteria, {
        ...(after ? { afterUlid: ulidOf(after, 'after') } : {}),
        ...(before ? { beforeUlid: ulidOf(before, 'before') } : {}),
        limit,
        oldestFirst: inverted,
      }),
  );
  return withNullCursors({ ...connection, totalCount: () => ctx.orders.countMatching(criteria) });
}

const OrderConnection = builder.connectionObject(
  {
    type: Order,
    name: 'OrderConnection',
    description: 'Orders newest first (by `ulid`, descending), in keyset-paged windows.',
  },
  { name: 'OrderEdge' },
);

interface ViewerShape {
  customerId: string;
}

const Viewer = builder.objectRef<ViewerShape>('Viewer').implement({
  description: 'The customer the bearer token speaks for.',
  fields: (t) => ({
    customerId: t.exposeString('customerId', { description: 'The `sub` of the token.' }),
    orders: t.connection(
      {
        type: Order,
        description: "This customer's orders, newest first. `filter.customerId` is rejected here.",
        args: { filter: t.arg({ type: OrderFilter, required: false }) },
        resolve: (viewer, args, ctx) => {
          const errors: FieldErrors = {};
          const criteria = criteriaOf(args.filter, errors);
          if (criteria.customerId !== undefined) {
            errors['filter.customerId'] = [
              'The customerId filter is only accepted on orders, not on viewer.orders.',
            ];
          }
          return loadOrderConnection(
            ctx,
            'viewer.orders',
            { ...criteria, customerId: viewer.customerId },
            args,
            errors,
          );
        },
      },
      OrderConnection,
    ),
  }),
});

builder.queryFields((t) => ({
  viewer: t.field({
    type: Viewer,
    nullable: true,
    description: 'The customer of the bearer token. UNAUTHENTICATED without a valid token.',
    resolve: async (_root, _args, ctx) => ({ customerId: requireCustomer(await ctx.viewer()).customerId }),
  }),
  orders: t.connection(
    {
      type: Order,
      description:
        "Every customer's orders, newest first, for tokens with the `orders:read:all` scope. " +
        'UNAUTHENTICATED without a token, FORBIDDEN without the scope.',
      args: { filter: t.arg({ type: OrderFilter, required: false }) },
      resolve: async (_root, args, ctx) => {
        if (!canReadAllOrders(requireCustomer(await ctx.viewer()))) throw forbidden();
        const errors: FieldErrors = {};
        const criteria = criteriaOf(args.filter, errors);
        return loadOrderConnection(ctx, 'orders', criteria, args, errors);
      },
    },
    OrderConnection,
  ),
}));
