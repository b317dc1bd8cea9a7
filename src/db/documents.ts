/** Money as stored: integer minor units plus ISO 4217 code. Never binary floating point. */
export interface MoneyDoc {
  amount: number;
  currency: string;
}

export interface VariantDoc {
  id: number;
  name: string;
  price: MoneyDoc;
  face_value: MoneyDoc;
}

export interface ProductDoc {
  /**
   * Always equal to `id` (set by the repository on insert, never sent to clients): DocumentDB
   * serves an order only on `_id` (its primary key), so pages sorted by id walk the key.
   */
  _id?: number;
  id: number;
  name: string;
  url: string;
  description: string;
  short_description: string;
  notes: string | null;
  category_name: string;
  /** Lower-cased category_name: lets an exact, case-insensitive filter use a plain index. */
  category_key: string;
  brand_name: string;
  brand_id: string;
  images: string[];
  region: string;
  channel: 'API' | 'Non API';
  tags: string[];
  is_permanent_out_of_stock: boolean;
  discount_percentage: number;
  variant: VariantDoc;
  created_at: Date;
  updated_at: Date;
}

export const FULFILLMENT_STATUSES = [
  'pending',
  'processing',
  'partially_fulfilled',
  'completed',
  'refunded',
] as const;
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number];

export const PAYMENT_STATUSES = ['pending', 'completed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** Item amounts are minor units in the order's currency. */
export interface OrderItemDoc {
  id: number;
  product_name: string;
  variant_name: string;
  quantity: number;
  unit_price: number;
  total_price: number;
  created_at: Date;
  updated_at: Date;
}

export interface OrderDoc {
  /**
   * Always equal to `ulid` (set by the repository on insert, never sent to clients): the lookup by
   * ULID and the newest-first lists then use the primary key, the one order DocumentDB serves.
   */
  _id?: string;
  id: number;
  /** Canonical upper-case Crockford base32. */
  ulid: string;
  order_number: string;
  /** The owning customer: the `sub` of their tokens. Never exposed on /api/v1. */
  customer_id: string;
  fulfillment_status: FulfillmentStatus;
  payment_status: PaymentStatus;
  currency: string;
  subtotal: number;
  conversion_fees: number;
  total: number;
  items: OrderItemDoc[];
  created_at: Date;
  updated_at: Date;
}
