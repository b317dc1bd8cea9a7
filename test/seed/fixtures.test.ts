import { describe, expect, it } from 'vitest';
import { FULFILLMENT_STATUSES, PAYMENT_STATUSES } from '../../src/db/documents';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { conversionFee, convertMinor, discountedPrice, type SeedCurrency } from '../../seed/pricing';
import { allStrings, duplicates, expectValidOrder, expectValidProduct } from './invariants';

const products = FIXTURE_PRODUCTS;
const orders = FIXTURE_ORDERS;
const items = orders.flatMap((order) => order.items);

describe('fixture products', () => {
  it('are about twenty, with unique ascending ids and unique variant ids', () => {
    expect(products.length).toBeGreaterThanOrEqual(18);
    expect(products.length).toBeLessThanOrEqual(25);
    const ids = products.map((product) => product.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(duplicates(ids)).toEqual([]);
    expect(duplicates(products.map((product) => product.variant.id))).toEqual([]);
    // Disjoint ranges: a product id used as a variant id finds nothing.
    const variantIds = new Set(products.map((product) => product.variant.id));
    expect(ids.filter((id) => variantIds.has(id))).toEqual([]);
  });

  it('are each valid documents', () => {
    for (const product of products) expectValidProduct(product);
  });

  it('span four categories with lower-cased category keys', () => {
    const categories = new Set(products.map((product) => product.category_name));
    expect([...categories].sort()).toEqual(['Game Credit', 'Gift Cards', 'Software', 'Subscriptions']);
    for (const category of categories) {
      expect(products.filter((product) => product.category_name === category).length).toBeGreaterThan(2);
    }
  });

  it('cover null and non-null notes, empty and non-empty tags, one and several images', () => {
    expect(products.some((product) => product.notes === null)).toBe(true);
    expect(products.some((product) => product.notes !== null)).toBe(true);
    expect(products.some((product) => product.tags.length === 0)).toBe(true);
    expect(products.some((product) => product.tags.length > 1)).toBe(true);
    expect(products.some((product) => product.images.length === 1)).toBe(true);
    expect(products.some((product) => product.images.length > 1)).toBe(true);
  });

  it('cover both channels, discounts, face values and stock states', () => {
    expect(new Set(products.map((product) => product.channel))).toEqual(new Set(['API', 'Non API']));
    expect(products.some((product) => product.discount_percentage === 0)).toBe(true);
    expect(products.some((product) => product.discount_percentage > 0)).toBe(true);
    const equal = (p: (typeof products)[number]) => p.variant.face_value.amount === p.variant.price.amount;
    expect(products.some(equal)).toBe(true);
    expect(products.some((product) => !equal(product))).toBe(true);
    expect(products.some((product) => product.is_permanent_out_of_stock)).toBe(true);
    expect(products.some((product) => !product.is_permanent_out_of_stock)).toBe(true);
  });

  it('price every variant as the face value less the discount', () => {
    for (const { variant, discount_percentage } of products) {
      expect(variant.price.amount).toBe(discountedPrice(variant.face_value.amount, discount_percentage));
    }
  });

  it('use at least three currencies, including USD, EUR and GBP', () => {
    const currencies = new Set(products.map((product) => product.variant.price.currency));
    for (const currency of ['USD', 'EUR', 'GBP']) expect(currencies).toContain(currency);
  });

  it('have store URLs and CDN images', () => {
    for (const product of products) {
      expect(product.url).toMatch(/^https:\/\/store\.example\.com\/products\/[a-z0-9-]+$/);
      for (const image of product.images) expect(image).toMatch(/^https:\/\/cdn\.example\.com\//);
    }
    expect(duplicates(products.map((product) => product.url))).toEqual([]);
  });

  it('include the search edge cases: C++, a parenthesis, non-ASCII and emoji tags', () => {
    expect(products.filter((product) => product.name.includes('C++'))).toHaveLength(1);
    expect(products.some((product) => product.name.includes('('))).toBe(true);
    const tags = products.flatMap((product) => product.tags);
    expect(tags).toContain('café');
    expect(tags.some((tag) => /\p{Extended_Pictographic}/u.test(tag))).toBe(true);
    expect(tags.some((tag) => /[^\x20-\x7e]/.test(tag))).toBe(true);
  });

  it('include a price of at least 1,000.00 (digit grouping)', () => {
    const large = products.filter((product) => product.variant.price.amount >= 100_000);
    expect(large.map((product) => product.variant.price.amount)).toContain(102550);
  });
});

describe('fixture orders', () => {
  it('are about seventeen, ids 1..n, with unique ULIDs, order numbers and item ids', () => {
    expect(orders.length).toBeGreaterThanOrEqual(6);
    expect(orders.map((order) => order.id)).toEqual(orders.map((_, index) => index + 1));
    expect(duplicates(orders.map((order) => order.ulid))).toEqual([]);
    expect(duplicates(orders.map((order) => order.order_number))).toEqual([]);
    expect(duplicates(items.map((item) => item.id))).toEqual([]);
    for (const order of orders) {
      expect(order.order_number).toBe(`ORD-2026-${String(order.id).padStart(6, '0')}`);
    }
  });

  it('are each valid documents: ULIDs, arithmetic, timestamps', () => {
    for (const order of orders) expectValidOrder(order);
  });

  it('belong to the two fixture customers, each with several orders', () => {
    const customers = Object.values(FIXTURE_CUSTOMERS);
    expect(new Set(orders.map((order) => order.customer_id))).toEqual(new Set(customers));
    for (const customer of customers) {
      expect(orders.filter((order) => order.customer_id === customer).length).toBeGreaterThanOrEqual(3);
    }
  });

  it('give Alice enough orders to page through: at least 12, in several statuses and currencies', () => {
    const alices = orders.filter((order) => order.customer_id === FIXTURE_CUSTOMERS.alice);
    expect(alices.length).toBeGreaterThanOrEqual(12);
    expect(new Set(alices.map((order) => order.fulfillment_status))).toEqual(new Set(FULFILLMENT_STATUSES));
    expect(new Set(alices.map((order) => order.payment_status))).toEqual(new Set(PAYMENT_STATUSES));
    expect(new Set(alices.map((order) => order.currency)).size).toBeGreaterThanOrEqual(4);
    // Ids and ULIDs disagree on order (order 2 is newer than order 5), so a test can tell them apart.
    const byUlid = [...alices].sort((a, b) => a.ulid.localeCompare(b.ulid)).map((order) => order.id);
    expect(byUlid).not.toEqual([...byUlid].sort((a, b) => a - b));
  });

  it('cover every fulfillment status and both payment statuses', () => {
    expect(new Set(orders.map((order) => order.fulfillment_status))).toEqual(new Set(FULFILLMENT_STATUSES));
    expect(new Set(orders.map((order) => order.payment_status))).toEqual(new Set(PAYMENT_STATUSES));
  });

  it('use at least three currencies, hold several multi-item orders and one large amount', () => {
    expect(new Set(orders.map((order) => order.currency)).size).toBeGreaterThanOrEqual(3);
    expect(orders.filter((order) => order.items.length >= 2).length).toBeGreaterThanOrEqual(3);
    expect(orders.some((order) => order.items.length === 3)).toBe(true);
    expect(orders.some((order) => order.total >= 100_000)).toBe(true);
    expect(orders.some((order) => order.conversion_fees > 0)).toBe(true);
    expect(orders.some((order) => order.conversion_fees === 0)).toBe(true);
  });

  it('sell fixture products at their prices, converted at the fixed rates', () => {
    for (const order of orders) {
      let converted = 0;
      for (const item of order.items) {
        const product = products.find((candidate) => candidate.name === item.product_name);
        expect(product, item.product_name).toBeDefined();
        expect(item.variant_name).toBe(product?.variant.name);
        const price = product!.variant.price;
        expect(item.unit_price, `${order.id}/${item.id}`).toBe(
          convertMinor(price.amount, price.currency as SeedCurrency, order.currency as SeedCurrency),
        );
        if (price.currency !== order.currency) converted += item.total_price;
      }
      expect(order.conversion_fees, `order ${order.id}`).toBe(conversionFee(converted));
    }
  });
});

describe('all fixture text', () => {
  it('contains neither ".*" nor "$where", so searches for them match nothing', () => {
    const strings = [...products, ...orders].flatMap(allStrings);
    expect(strings.length).toBeGreaterThan(100);
    expect(strings.filter((text) => text.includes('.*') || text.toLowerCase().includes('$where'))).toEqual(
      [],
    );
  });
});
