import type { OrderDoc } from '../db/documents';
import { unauthenticated } from '../errors';
import type { Viewer } from './viewer';

export const READ_ALL_ORDERS_SCOPE = 'orders:read:all';
/** Every scope a token can usefully carry (the token script refuses others). */
export const KNOWN_SCOPES: readonly string[] = [READ_ALL_ORDERS_SCOPE];

/** Authentication comes first, so an anonymous caller learns nothing about which orders exist. */
export function requireCustomer(viewer: Viewer): Extract<Viewer, { kind: 'customer' }> {
  if (viewer.kind !== 'customer') throw unauthenticated();
  return viewer;
}

/** Support staff: every customer's orders, one at a time or as a list. */
export function canReadAllOrders(viewer: Extract<Viewer, { kind: 'customer' }>): boolean {
  return viewer.scopes.has(READ_ALL_ORDERS_SCOPE);
}

export function canReadOrder(viewer: Extract<Viewer, { kind: 'customer' }>, order: OrderDoc): boolean {
  return canReadAllOrders(viewer) || order.customer_id === viewer.customerId;
}
