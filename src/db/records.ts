import type { OrderDoc, ProductDoc } from './documents';
import { searchFields, type SearchFields } from './product-search';

/** A product as stored: keyed by its id, with the grams of its searchable text. */
export function productRecord(product: ProductDoc): ProductDoc & { _id: number } & SearchFields {
  return { ...product, _id: product.id, ...searchFields(product) };
}

/** An order as stored: keyed by its ULID. */
export function orderRecord(order: OrderDoc): OrderDoc & { _id: string } {
  return { ...order, _id: order.ulid };
}
