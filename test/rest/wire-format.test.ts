import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MoneyDoc } from '../../src/db/documents';
import { FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { JSON_TYPE, call } from './helpers';

/**
 * The wire format for every fixture product and order (bodies.test.ts pins two bodies byte for
 * byte; this file checks the rules on all of them): field names and order, no internal fields,
 * timestamps, and both money shapes, with expected values computed here from the fixtures.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;
const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£', CAD: 'CA$', AUD: 'A$' };

const timestamp = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, '+00:00');

/** Two fraction digits from integer minor units, by string arithmetic only. */
function decimal(minor: number): string {
  const digits = String(minor).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

function grouped(minor: number): string {
  const [whole = '', fraction = ''] = decimal(minor).split('.');
  return `${whole.replace(/\B(?=(\d{3})+$)/g, ',')}.${fraction}`;
}

const productMoney = (money: MoneyDoc) => ({
  amount: String(money.amount),
  currency: money.currency,
  formatted: `${SYMBOLS[money.currency]}${grouped(money.amount)}`,
  decimal: decimal(money.amount),
  localized_decimal: grouped(money.amount),
});

const orderMoney = (minor: number, currency: string) => ({
  amount: Number(decimal(minor)),
  formatted: `${SYMBOLS[currency]}${grouped(minor)}`,
});

const PRODUCT_KEYS = [
  'id',
  'name',
  'url',
  'description',
  'short_description',
  'notes',
  'category_name',
  'brand_name',
  'brand_id',
  'images',
  'region',
  'channel',
  'tags',
  'isPermanentOutOfStock',
  'discount_percentage',
  'variant',
  'created_at',
  'updated_at',
];

describe('products', () => {
  it('every product is exactly the fixture in the contract shape, field order included', async () => {
    const reply = await call(server, '/api/v1/products?per_page=100');
    expect(reply.headers.get('content-type')).toBe(JSON_TYPE);
    expect(reply.body.data).toHaveLength(FIXTURE_PRODUCTS.length);
    FIXTURE_PRODUCTS.forEach((product, index) => {
      const expected = {
        id: product.id,
        name: product.name,
        url: product.url,
        description: product.description,
        short_description: product.short_description,
        notes: product.notes,
        category_name: product.category_name,
        brand_name: product.brand_name,
        brand_id: product.brand_id,
        images: product.images,
        region: product.region,
        channel: product.channel,
        tags: product.tags,
        isPermanentOutOfStock: product.is_permanent_out_of_stock,
        discount_percentage: product.discount_percentage,
        variant: {
          id: product.variant.id,
          name: product.variant.name,
          price: productMoney(product.variant.price),
          face_value: productMoney(product.variant.face_value),
        },
        created_at: timestamp(product.created_at),
        updated_at: timestamp(product.updated_at),
      };
      expect(JSON.stringify(reply.body.data[index]), `product ${product.id}`).toBe(JSON.stringify(expected));
    });
  });

  it('never leak internal fields (_id, category_key, snake-case stock flag)', async () => {
    const reply = await call(server, '/api/v1/products?per_page=100');
    for (const name of ['_id', 'category_key', 'is_permanent_out_of_stock', 'customer_id']) {
      expect(reply.text).not.toContain(`"${name}"`);
    }
    for (const product of reply.body.data) expect(Object.keys(product)).toEqual(PRODUCT_KEYS);
  });

  it('timestamps carry an explicit UTC offset and no fraction', async () => {
    const reply = await call(server, '/api/v1/products?per_page=100');
    for (const product of reply.body.data) {
      expect(product.created_at).toMatch(TIMESTAMP);
      expect(product.updated_at).toMatch(TIMESTAMP);
    }
  });

  it('ProductMoney members are all strings; amount is digits only', async () => {
    const reply = await call(server, '/api/v1/products?per_page=100');
    for (const { variant } of reply.body.data) {
      for (const money of [variant.price, variant.face_value]) {
        expect(Object.keys(money)).toEqual([
          'amount',
          'currency',
          'formatted',
          'decimal',
          'localized_decimal',
        ]);
        expect(Object.values(money).every((value) => typeof value === 'string')).toBe(true);
        expect(money.amount).toMatch(/^\d+$/);
        expect(money.decimal).toMatch(/^\d+\.\d{2}$/);
      }
    }
  });
});

describe('orders', () => {
  it('every order is exactly the fixture in the contract shape, field order included', async () => {
    const token = bearer(await mintToken({ sub: 'cus_support', scope: 'orders:read:all' }));
    for (const order of FIXTURE_ORDERS) {
      const reply = await call(server, `/api/v1/orders/${order.ulid}`, { headers: token });
      expect(reply.headers.get('content-type')).toBe(JSON_TYPE);
      const money = (minor: number) => orderMoney(minor, order.currency);
      const expected = {
        id: order.id,
        ulid: order.ulid,
        order_number: order.order_number,
        fulfillment_status: order.fulfillment_status,
        payment_status: order.payment_status,
        subtotal: money(order.subtotal),
        conversion_fees: money(order.conversion_fees),
        total: money(order.total),
        currency: order.currency,
        items: order.items.map((item) => ({
          id: item.id,
          product_name: item.product_name,
          variant_name: item.variant_name,
          quantity: item.quantity,
          unit_price: money(item.unit_price),
          total_price: money(item.total_price),
          created_at: timestamp(item.created_at),
          updated_at: timestamp(item.updated_at),
        })),
        created_at: timestamp(order.created_at),
        updated_at: timestamp(order.updated_at),
      };
      expect(reply.text, `order ${order.id}`).toBe(JSON.stringify(expected));
      expect(reply.text).not.toMatch(/"(_id|customer_id)"/);
    }
  });

  it('OrderMoney.amount is a JSON number in major units (1025.5, not "1025.50")', async () => {
    const reply = await call(server, `/api/v1/orders/${FIXTURE_ORDERS[5]!.ulid}`, {
      headers: bearer(await mintToken({ sub: 'cus_bob' })),
    });
    expect(reply.text).toContain('"unit_price":{"amount":1025.5,"formatted":"$1,025.50"}');
    expect(reply.text).toContain('"conversion_fees":{"amount":0,"formatted":"$0.00"}');
  });

  it('statuses are the lower-case values of the spec', async () => {
    const token = bearer(await mintToken({ sub: 'cus_support', scope: 'orders:read:all' }));
    const seen = new Set<string>();
    for (const order of FIXTURE_ORDERS) {
      const reply = await call(server, `/api/v1/orders/${order.ulid}`, { headers: token });
      expect(['pending', 'processing', 'partially_fulfilled', 'completed', 'refunded']).toContain(
        reply.body.fulfillment_status,
      );
      expect(['pending', 'completed']).toContain(reply.body.payment_status);
      seen.add(reply.body.fulfillment_status);
    }
    expect(seen.size).toBe(5);
  });
});
