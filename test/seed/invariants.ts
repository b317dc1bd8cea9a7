import { decodeTime, isValid } from 'ulid';
import { expect } from 'vitest';
import {
  FULFILLMENT_STATUSES,
  PAYMENT_STATUSES,
  type OrderDoc,
  type ProductDoc,
} from '../../src/db/documents';

/** Checks shared by the fixture and generator tests: what every seed document must satisfy. */

export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function isWholeSecond(date: Date): boolean {
  return date instanceof Date && !Number.isNaN(date.getTime()) && date.getTime() % 1000 === 0;
}

function expectMinorUnits(value: number): void {
  expect(Number.isSafeInteger(value), `${value} is integer minor units`).toBe(true);
  expect(value).toBeGreaterThanOrEqual(0);
}

export function expectValidProduct(product: ProductDoc): void {
  expect(Number.isSafeInteger(product.id) && product.id > 0).toBe(true);
  expect(product.name.length).toBeGreaterThan(0);
  expect(product.url).toMatch(/^https:\/\/store\.example\.com\/products\/[a-z0-9-]+$/);
  for (const image of product.images) expect(image).toMatch(/^https:\/\/cdn\.example\.com\/\S+$/);
  expect(product.images.length).toBeGreaterThan(0);
  expect(product.category_key).toBe(product.category_name.toLowerCase());
  expect(['API', 'Non API']).toContain(product.channel);
  expect(Number.isInteger(product.discount_percentage)).toBe(true);
  expect(product.discount_percentage).toBeGreaterThanOrEqual(0);
  expect(product.discount_percentage).toBeLessThan(100);
  expect(product.notes === null || product.notes.length > 0).toBe(true);
  expectMinorUnits(product.variant.price.amount);
  expectMinorUnits(product.variant.face_value.amount);
  expect(product.variant.price.currency).toMatch(/^[A-Z]{3}$/);
  expect(product.variant.face_value.currency).toBe(product.variant.price.currency);
  expect(product.variant.price.amount).toBeLessThanOrEqual(product.variant.face_value.amount);
  expect(isWholeSecond(product.created_at)).toBe(true);
  expect(isWholeSecond(product.updated_at)).toBe(true);
  expect(product.updated_at.getTime()).toBeGreaterThanOrEqual(product.created_at.getTime());
}

export function expectValidOrder(order: OrderDoc): void {
  expect(Number.isSafeInteger(order.id) && order.id > 0).toBe(true);
  expect(order.ulid).toMatch(ULID_PATTERN);
  expect(isValid(order.ulid)).toBe(true);
  // The ULID was minted when the order was created (the stored time drops the milliseconds).
  const ulidLag = decodeTime(order.ulid) - order.created_at.getTime();
  expect(ulidLag).toBeGreaterThanOrEqual(0);
  expect(ulidLag).toBeLessThan(1000);
  expect(order.order_number).toMatch(/^ORD-\d{4}-\d{6,}$/);
  expect(order.customer_id).toMatch(/^cus_\w+$/);
  expect(FULFILLMENT_STATUSES).toContain(order.fulfillment_status);
  expect(PAYMENT_STATUSES).toContain(order.payment_status);
  expect(order.currency).toMatch(/^[A-Z]{3}$/);
  expect(order.items.length).toBeGreaterThan(0);
  for (const item of order.items) {
    expect(Number.isSafeInteger(item.quantity) && item.quantity > 0).toBe(true);
    expectMinorUnits(item.unit_price);
    expect(item.total_price).toBe(item.unit_price * item.quantity);
    expect(isWholeSecond(item.created_at)).toBe(true);
    expect(isWholeSecond(item.updated_at)).toBe(true);
    expect(item.updated_at.getTime()).toBeGreaterThanOrEqual(item.created_at.getTime());
    expect(item.created_at.getTime()).toBeGreaterThanOrEqual(order.created_at.getTime());
    expect(item.updated_at.getTime()).toBeLessThanOrEqual(order.updated_at.getTime());
  }
  expectMinorUnits(order.conversion_fees);
  expect(order.subtotal).toBe(order.items.reduce((sum, item) => sum + item.total_price, 0));
  expect(order.total).toBe(order.subtotal + order.conversion_fees);
  expect(isWholeSecond(order.created_at)).toBe(true);
  expect(isWholeSecond(order.updated_at)).toBe(true);
  expect(order.updated_at.getTime()).toBeGreaterThanOrEqual(order.created_at.getTime());
}

/** Every string anywhere in a document, for "no field contains X" checks. */
export function allStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value instanceof Date || value === null || typeof value !== 'object') return [];
  return Object.values(value as Record<string, unknown>).flatMap(allStrings);
}

export function duplicates<T>(values: readonly T[]): T[] {
  const seen = new Set<T>();
  return values.filter((value) => (seen.has(value) ? true : (seen.add(value), false)));
}
