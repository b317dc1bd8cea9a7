import { describe, expect, it } from 'vitest';
import type { OrderDoc, ProductDoc } from '../../src/db/documents';
import { FIXTURE_PRODUCTS } from '../../seed/fixtures';
import {
  MAX_BATCH_SIZE,
  VARIANT_ID_OFFSET,
  generateOrders,
  generateProduct,
  generateProducts,
  type OrderGeneratorOptions,
  type ProductGeneratorOptions,
} from '../../seed/generator';
import { conversionFee, convertMinor, discountedPrice, type SeedCurrency } from '../../seed/pricing';
import { allStrings, duplicates, expectValidOrder, expectValidProduct } from './invariants';

function allProducts(options: ProductGeneratorOptions): ProductDoc[] {
  return [...generateProducts(options)].flat();
}

function allOrders(options: OrderGeneratorOptions): OrderDoc[] {
  return [...generateOrders(options)].flat();
}

const PRODUCT_COUNT = 4000;
const ORDER_COUNT = 3000;
const products = allProducts({ seed: 42, count: PRODUCT_COUNT });
const orders = allOrders({ seed: 42, count: ORDER_COUNT, products: { startId: 1, count: PRODUCT_COUNT } });

describe('generator determinism', () => {
  it('gives byte-identical products and orders for the same arguments', () => {
    expect(JSON.stringify(allProducts({ seed: 42, count: PRODUCT_COUNT }))).toBe(JSON.stringify(products));
    expect(
      JSON.stringify(
        allOrders({ seed: 42, count: ORDER_COUNT, products: { startId: 1, count: PRODUCT_COUNT } }),
      ),
    ).toBe(JSON.stringify(orders));
  });

  it('does not depend on the batch size', () => {
    expect(JSON.stringify(allProducts({ seed: 42, count: PRODUCT_COUNT, batchSize: 333 }))).toBe(
      JSON.stringify(products),
    );
    const rebatched = allOrders({
      seed: 42,
      count: ORDER_COUNT,
      products: { startId: 1, count: PRODUCT_COUNT },
      batchSize: 4999,
    });
    expect(JSON.stringify(rebatched)).toBe(JSON.stringify(orders));
  });

  it('gives different data for a different seed', () => {
    const other = allProducts({ seed: 43, count: PRODUCT_COUNT });
    expect(JSON.stringify(other)).not.toBe(JSON.stringify(products));
    const differing = other.filter((product, index) => product.name !== products[index]?.name);
    expect(differing.length).toBeGreaterThan(PRODUCT_COUNT / 2);
    const otherOrders = allOrders({ seed: 43, count: 100 });
    expect(otherOrders.map((order) => order.ulid)).not.toEqual(
      orders.slice(0, 100).map((order) => order.ulid),
    );
  });

  it('re-derives one product by id, and a later start id continues the same sequence', () => {
    expect(generateProduct(42, 1234)).toEqual(products[1233]);
    expect(allProducts({ seed: 42, count: 10, startId: 101 })).toEqual(products.slice(100, 110));
  });

  it('does not read the clock or Math.random', () => {
    const random = Math.random;
    const now = Date.now;
    Math.random = () => {
      throw new Error('Math.random used');
    };
    Date.now = () => {
      throw new Error('Date.now used');
    };
    try {
      allProducts({ seed: 5, count: 50 });
      allOrders({ seed: 5, count: 50 });
    } finally {
      Math.random = random;
      Date.now = now;
    }
  });
});

describe('generator batches', () => {
  it('yields batches of the requested size, at most 5000 documents', () => {
    const sizes = [...generateProducts({ seed: 1, count: 2500, batchSize: 1000 })].map(
      (batch) => batch.length,
    );
    expect(sizes).toEqual([1000, 1000, 500]);
    expect([...generateOrders({ seed: 1, count: 0 })]).toEqual([]);
    expect(() => generateProducts({ seed: 1, count: 10, batchSize: MAX_BATCH_SIZE + 1 }).next()).toThrow(
      RangeError,
    );
    expect(() => generateOrders({ seed: -1, count: 10 }).next()).toThrow(RangeError);
  });
});

describe('generated products', () => {
  it('have ascending unique ids from startId and unique variant ids clear of the fixtures', () => {
    expect(products.map((product) => product.id)).toEqual(products.map((_, index) => index + 1));
    expect(duplicates(products.map((product) => product.variant.id))).toEqual([]);
    for (const product of products) expect(product.variant.id).toBe(VARIANT_ID_OFFSET + product.id);
    const fixtureVariants = new Set(FIXTURE_PRODUCTS.map((product) => product.variant.id));
    expect(products.filter((product) => fixtureVariants.has(product.variant.id))).toEqual([]);
    expect(allProducts({ seed: 42, count: 3, startId: 21 }).map((product) => product.id)).toEqual([
      21, 22, 23,
    ]);
  });

  it('are each valid documents with unique URLs', () => {
    for (const product of products) expectValidProduct(product);
    expect(duplicates(products.map((product) => product.url))).toEqual([]);
  });

  it('price every variant as the face value less the discount', () => {
    for (const { variant, discount_percentage } of products) {
      expect(variant.price.amount).toBe(discountedPrice(variant.face_value.amount, discount_percentage));
    }
  });

  it('have the same variety as the fixtures', () => {
    expect(new Set(products.map((product) => product.category_name))).toEqual(
      new Set(['Gift Cards', 'Game Credit', 'Software', 'Subscriptions']),
    );
    expect(new Set(products.map((product) => product.channel))).toEqual(new Set(['API', 'Non API']));
    expect(new Set(products.map((product) => product.variant.price.currency)).size).toBeGreaterThanOrEqual(4);
    const has = (predicate: (product: ProductDoc) => boolean) => products.some(predicate);
    expect(has((p) => p.notes === null) && has((p) => p.notes !== null)).toBe(true);
    expect(has((p) => p.tags.length === 0) && has((p) => p.tags.length > 1)).toBe(true);
    expect(has((p) => p.images.length === 1) && has((p) => p.images.length > 1)).toBe(true);
    expect(has((p) => p.discount_percentage === 0) && has((p) => p.discount_percentage > 0)).toBe(true);
    expect(has((p) => p.is_permanent_out_of_stock) && has((p) => !p.is_permanent_out_of_stock)).toBe(true);
    expect(has((p) => p.variant.price.amount >= 100_000)).toBe(true);
    expect(has((p) => p.tags.includes('🎮'))).toBe(true);
  });
});

describe('generated orders', () => {
  it('have ascending ids and unique ULIDs, order numbers and contiguous item ids', () => {
    expect(orders.map((order) => order.id)).toEqual(orders.map((_, index) => index + 1));
    expect(duplicates(orders.map((order) => order.ulid))).toEqual([]);
    expect(duplicates(orders.map((order) => order.order_number))).toEqual([]);
    const itemIds = orders.flatMap((order) => order.items.map((item) => item.id));
    expect(itemIds).toEqual(itemIds.map((_, index) => index + 1));
  });

  it('are each valid documents: ULIDs, arithmetic, timestamps', () => {
    for (const order of orders) expectValidOrder(order);
  });

  it('sell the generated products at their converted prices, with the conversion fee', () => {
    const byName = new Map<string, ProductDoc[]>();
    for (const product of products) byName.set(product.name, [...(byName.get(product.name) ?? []), product]);
    for (const order of orders.slice(0, 500)) {
      // Items name the product, not its id, and the same name can be on sale in several regions:
      // the converted part of the order lies between what must and what may have been converted.
      let mustConvert = 0;
      let mayConvert = 0;
      for (const item of order.items) {
        const candidates = (byName.get(item.product_name) ?? []).filter(
          (product) =>
            product.variant.name === item.variant_name &&
            convertMinor(
              product.variant.price.amount,
              product.variant.price.currency as SeedCurrency,
              order.currency as SeedCurrency,
            ) === item.unit_price,
        );
        expect(candidates.length, `${order.id}: ${item.product_name}`).toBeGreaterThan(0);
        const foreign = candidates.filter((product) => product.variant.price.currency !== order.currency);
        if (foreign.length === candidates.length) mustConvert += item.total_price;
        if (foreign.length > 0) mayConvert += item.total_price;
      }
      expect(order.conversion_fees, `order ${order.id}`).toBeGreaterThanOrEqual(conversionFee(mustConvert));
      expect(order.conversion_fees, `order ${order.id}`).toBeLessThanOrEqual(conversionFee(mayConvert));
    }
  });

  it('cover every status, several currencies, multi-item orders and fees', () => {
    expect(new Set(orders.map((order) => order.fulfillment_status)).size).toBe(5);
    expect(new Set(orders.map((order) => order.payment_status)).size).toBe(2);
    expect(new Set(orders.map((order) => order.currency)).size).toBeGreaterThanOrEqual(3);
    expect(orders.some((order) => order.items.length === 3)).toBe(true);
    expect(orders.some((order) => order.conversion_fees > 0)).toBe(true);
    expect(orders.some((order) => order.total >= 100_000)).toBe(true);
    expect(new Set(orders.map((order) => order.customer_id)).size).toBeGreaterThan(100);
  });

  it('give customers realistic order counts: a few with many, most with one or two', () => {
    const perCustomer = new Map<string, number>();
    for (const order of orders)
      perCustomer.set(order.customer_id, (perCustomer.get(order.customer_id) ?? 0) + 1);
    const counts = [...perCustomer.values()].sort((a, b) => b - a);
    // 3000 orders over a pool of 1000: the busiest customer has about a tenth of them.
    expect(counts[0]).toBeGreaterThan(ORDER_COUNT / 20);
    expect(counts[0]).toBeLessThan(ORDER_COUNT / 5);
    expect(counts.filter((count) => count >= 20).length).toBeGreaterThanOrEqual(5);
    const median = counts[Math.floor(counts.length / 2)]!;
    expect(median).toBeLessThanOrEqual(2);
    expect(perCustomer.get('cus_000001')).toBe(counts[0]);
    for (const customer of perCustomer.keys()) expect(customer).toMatch(/^cus_(000[0-9]{3}|001000)$/);
  });

  it('continue ids from the given starts', () => {
    const [batch] = [...generateOrders({ seed: 42, count: 2, startId: 9, startItemId: 117 })];
    expect(batch?.map((order) => order.id)).toEqual([9, 10]);
    expect(batch?.[0]?.items[0]?.id).toBe(117);
  });
});

describe('all generated text', () => {
  it('contains neither ".*" nor "$where"', () => {
    const strings = [...products, ...orders].flatMap(allStrings);
    expect(strings.filter((text) => text.includes('.*') || text.includes('$where'))).toEqual([]);
  });
});
