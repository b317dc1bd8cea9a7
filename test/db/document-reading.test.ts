import { Decimal128 } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { readEach, readOrder, readProduct } from '../../src/db/document-reading';
import { FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';

/** The README's table "What the gateway reads", one row at a time, without a database. */

const product = FIXTURE_PRODUCTS[0]!;
const order = FIXTURE_ORDERS[0]!;
const withPrice = (amount: unknown) => ({
  ...product,
  variant: { ...product.variant, price: { amount, currency: 'USD' } },
});

describe('readProduct', () => {
  it('returns the gateway’s own documents unchanged', () => {
    expect(readProduct({ _id: product.id, ...product, search_grams: ['abc'] })).toEqual(product);
  });

  it.each([
    [2500, 2500],
    ['12.50', 1250],
    ['12.5', 1250],
    ['12', 1200],
    [' 7.00 ', 700],
    [Decimal128.fromString('15.00'), 1500],
    [Decimal128.fromString('0.1'), 10],
    ['3.100', 310],
  ])('reads the amount %j as %d minor units', (amount, minor) => {
    expect(readProduct(withPrice(amount)).variant.price.amount).toBe(minor);
  });

  it.each([['12.345'], ['twelve'], [12.5], [-100], ['-1.00'], [null], [{}], ['1e3']])(
    'refuses the amount %j',
    (amount) => {
      expect(() => readProduct(withPrice(amount))).toThrow(/variant\.price\.amount/);
    },
  );

  it.each([
    [new Date('2026-11-25T17:00:00Z'), '2026-11-25T17:00:00.000Z'],
    ['2026-11-25 17:00:00', '2026-11-25T17:00:00.000Z'],
    ['2026-11-25 17:00:00.123456', '2026-11-25T17:00:00.123Z'],
    ['2026-11-25T17:00:00', '2026-11-25T17:00:00.000Z'],
    ['2026-11-25T17:00:00Z', '2026-11-25T17:00:00.000Z'],
    ['2026-11-25T18:00:00+01:00', '2026-11-25T17:00:00.000Z'],
    [1_764_090_000, '2025-11-25T17:00:00.000Z'],
    [1_764_090_000_000, '2025-11-25T17:00:00.000Z'],
  ])('reads the date %j', (value, iso) => {
    expect(readProduct({ ...product, updated_at: value }).updated_at.toISOString()).toBe(iso);
  });

  it.each([['25/11/2026'], ['2026-11-25 17:00'], ['soon'], [true], ['2026-13-45 99:00:00'], [1e15], [-1e14]])(
    'refuses the date %j',
    (value) => {
      expect(() => readProduct({ ...product, created_at: value })).toThrow(/created_at/);
    },
  );

  it('reads null or missing lists, flags, notes and updated_at by the table', () => {
    const { updated_at: _updated, ...withoutUpdated } = product;
    const read = readProduct({
      ...withoutUpdated,
      tags: null,
      images: undefined,
      notes: undefined,
      is_permanent_out_of_stock: '1',
      discount_percentage: '15',
      channel: 'non_api',
      brand_id: 42,
    });
    expect(read).toMatchObject({
      tags: [],
      images: [],
      notes: null,
      is_permanent_out_of_stock: true,
      discount_percentage: 15,
      channel: 'Non API',
      brand_id: '42',
      updated_at: product.created_at,
    });
  });

  it('refuses a numeric _id other than the id, a missing name, an unknown channel', () => {
    expect(() => readProduct({ ...product, _id: 99 })).toThrow(/_id/);
    expect(() => readProduct({ ...product, name: null })).toThrow(/name/);
    expect(() => readProduct({ ...product, channel: 'Retail' })).toThrow(/channel/);
    expect(() => readProduct({ ...product, discount_percentage: 150 })).toThrow(/discount_percentage/);
  });
});

describe('readOrder', () => {
  it('returns the gateway’s own documents unchanged', () => {
    expect(readOrder({ _id: order.ulid, ...order })).toEqual(order);
  });

  it('reads Laravel shapes: decimal strings, a lower-case ULID, statuses in any case', () => {
    const read = readOrder({
      ...order,
      ulid: order.ulid.toLowerCase(),
      subtotal: '124.97',
      total: Decimal128.fromString('124.97'),
      conversion_fees: null,
      payment_status: 'Completed',
      items: order.items.map((item) => ({
        ...item,
        unit_price: '95.00',
        quantity: '1',
        total_price: undefined,
      })),
    });
    expect(read).toMatchObject({ ulid: order.ulid, subtotal: 12497, total: 12497, conversion_fees: 0 });
    expect(read.items[0]).toMatchObject({
      unit_price: 9500,
      quantity: 1,
      total_price: 9500,
      created_at: order.created_at,
      updated_at: order.updated_at,
    });
  });

  it('refuses a ULID-shaped _id other than the ulid, and an unknown status', () => {
    expect(() => readOrder({ ...order, _id: FIXTURE_ORDERS[1]!.ulid })).toThrow(/_id/);
    expect(() => readOrder({ ...order, payment_status: 'paid' })).toThrow(/payment_status/);
  });
});

describe('readEach', () => {
  it('leaves out and reports each unreadable document, keeping the others in order', () => {
    const reports: string[] = [];
    const read = readEach(
      'products',
      [{ ...product }, { ...product, id: 2, name: null }, { ...FIXTURE_PRODUCTS[2]! }],
      readProduct,
      (collection, key, reason) => reports.push(`${collection} ${key} ${reason}`),
    );
    expect(read.map((doc) => doc.id)).toEqual([1, 3]);
    expect(reports).toEqual(['products id=2 name: null is not accepted']);
  });
});
