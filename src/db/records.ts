import type { OrderDoc, ProductDoc } from './documents';

/** A product as stored: keyed by its id. */
export function productRecord(product: ProductDoc): ProductDoc & { _id: number } {
  return { ...product, _id: product.id };
}

/** An order as stored: keyed by its ULID. */
export function orderRecord(order: OrderDoc): OrderDoc & { _id: string } {
  return { ...order, _id: order.ulid };
}
