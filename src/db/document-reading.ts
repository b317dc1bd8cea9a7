import {
  FULFILLMENT_STATUSES,
  PAYMENT_STATUSES,
  type MoneyDoc,
  type OrderDoc,
  type OrderItemDoc,
  type ProductDoc,
  type VariantDoc,
} from './documents';
import {
  bounded,
  count,
  currency,
  flag,
  instant,
  minorUnits,
  nullableText,
  oneOf,
  positiveInteger,
  record,
  text,
  textList,
  UnreadableValue,
} from './stored-values';

/**
 * Every document the repositories return passes through here: a raw document, as the gateway or
 * another application wrote it, becomes the typed document or is refused as a whole. The rules
 * (src/db/stored-values.ts) are the README's table "What the gateway reads".
 */

type Raw = Record<string, unknown>;

/** Told of each document that could not be read: which collection, its key, and why. */
export type UnreadableReport = (collection: 'products' | 'orders', key: string, reason: string) => void;

const CHANNELS = ['API', 'Non API'] as const;

/** A product's price: never negative (/api/v1 sends its minor units as digits). */
function money(field: string, value: unknown, fallbackCurrency?: string): MoneyDoc {
  const doc = record(field, value);
  const amount = minorUnits(`${field}.amount`, doc.amount);
  if (amount < 0) throw new UnreadableValue(`${field}.amount: negative`);
  return {
    amount,
    currency: currency(`${field}.currency`, doc.currency ?? fallbackCurrency),
  };
}

function variant(value: unknown): VariantDoc {
  const doc = record('variant', value);
  const price = money('variant.price', doc.price);
  return {
    id: positiveInteger('variant.id', doc.id),
    name: text('variant.name', doc.name, ''),
    price,
    // A writer that knows only one amount: the nominal value is the price.
    face_value:
      doc.face_value === null || doc.face_value === undefined
        ? price
        : money('variant.face_value', doc.face_value, price.currency),
  };
}

/** The fields that hold a value (null and missing ones left out, so defaults apply). */
function stripAbsent(doc: Raw): Raw {
  return Object.fromEntries(Object.entries(doc).filter(([, value]) => value !== null && value !== undefined));
}

/** Times: updated_at defaults to created_at. */
function times(doc: Raw, prefix = ''): { created_at: Date; updated_at: Date } {
  const created = instant(`${prefix}created_at`, doc.created_at);
  const updated =
    doc.updated_at === null || doc.updated_at === undefined
      ? created
      : instant(`${prefix}updated_at`, doc.updated_at);
  return { created_at: created, updated_at: updated };
}

export function readProduct(doc: Raw): ProductDoc {
  const id = positiveInteger('id', doc.id);
  // A numeric key stands for the id in every keyset order (src/db/foreign-keys.ts).
  if (typeof doc._id === 'number' && doc._id !== id) throw new UnreadableValue('_id: a number other than id');
  const categoryName = text('category_name', doc.category_name, '');
  return {
    id,
    name: text('name', doc.name),
    url: text('url', doc.url, ''),
    description: text('description', doc.description, ''),
    short_description: text('short_description', doc.short_description, ''),
    notes: nullableText('notes', doc.notes),
    category_name: categoryName,
    category_key: text('category_key', doc.category_key, categoryName.toLowerCase()),
    brand_name: text('brand_name', doc.brand_name, ''),
    brand_id: text('brand_id', doc.brand_id, ''),
    images: textList('images', doc.images),
    region: text('region', doc.region, ''),
    channel: oneOf('channel', doc.channel, CHANNELS),
    tags: textList('tags', doc.tags),
    is_permanent_out_of_stock: flag('is_permanent_out_of_stock', doc.is_permanent_out_of_stock),
    discount_percentage: bounded('discount_percentage', doc.discount_percentage, 0, 0, 100),
    variant: variant(doc.variant),
    ...times(doc),
  };
}

/** An item without times of its own has its order's. */
function orderItem(value: unknown, index: number, orderTimes: Raw): OrderItemDoc {
  const prefix = `items.${index}.`;
  const doc = record(`items.${index}`, value);
  const quantity = count(`${prefix}quantity`, doc.quantity, 1);
  const unitPrice = minorUnits(`${prefix}unit_price`, doc.unit_price);
  return {
    id: positiveInteger(`${prefix}id`, doc.id),
    product_name: text(`${prefix}product_name`, doc.product_name, ''),
    variant_name: text(`${prefix}variant_name`, doc.variant_name, ''),
    quantity,
    unit_price: unitPrice,
    total_price:
      doc.total_price === null || doc.total_price === undefined
        ? unitPrice * quantity
        : minorUnits(`${prefix}total_price`, doc.total_price),
    ...times(
      { created_at: orderTimes.created_at, updated_at: orderTimes.updated_at, ...stripAbsent(doc) },
      prefix,
    ),
  };
}

const ULID_SHAPE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function readOrder(doc: Raw): OrderDoc {
  const ulid = text('ulid', doc.ulid).toUpperCase();
  if (!ULID_SHAPE.test(ulid)) throw new UnreadableValue('ulid: not a ULID');
  // A ULID-shaped key stands for the ulid in every keyset order (src/db/foreign-keys.ts).
  if (typeof doc._id === 'string' && ULID_SHAPE.test(doc._id) && doc._id !== ulid)
    throw new UnreadableValue('_id: a ULID other than ulid');
  const items = doc.items === null || doc.items === undefined ? [] : doc.items;
  if (!Array.isArray(items)) throw new UnreadableValue('items: not a list');
  const orderTimes = times(doc);
  const subtotal = minorUnits('subtotal', doc.subtotal);
  const conversionFees =
    doc.conversion_fees === null || doc.conversion_fees === undefined
      ? 0
      : minorUnits('conversion_fees', doc.conversion_fees);
  return {
    id: positiveInteger('id', doc.id),
    ulid,
    order_number: text('order_number', doc.order_number, ''),
    customer_id: text('customer_id', doc.customer_id),
    fulfillment_status: oneOf('fulfillment_status', doc.fulfillment_status, FULFILLMENT_STATUSES),
    payment_status: oneOf('payment_status', doc.payment_status, PAYMENT_STATUSES),
    currency: currency('currency', doc.currency),
    subtotal,
    conversion_fees: conversionFees,
    total:
      doc.total === null || doc.total === undefined
        ? subtotal + conversionFees
        : minorUnits('total', doc.total),
    items: items.map((item, index) => orderItem(item, index, orderTimes)),
    ...orderTimes,
  };
}

/** The key to name an unreadable document by: its id if it has a usable one, else its `_id`. */
function keyOf(doc: Raw, idField: 'id' | 'ulid'): string {
  const id = doc[idField];
  if (typeof id === 'number' || typeof id === 'string') return `${idField}=${id}`;
  return `_id=${String(doc._id)}`;
}

/**
 * The readable documents of a read, in their order; each unreadable one is reported and left out,
 * so it affects itself alone.
 */
export function readEach<T>(
  collection: 'products' | 'orders',
  docs: readonly Raw[],
  read: (doc: Raw) => T,
  report: UnreadableReport | undefined,
): T[] {
  const readable: T[] = [];
  for (const doc of docs) {
    try {
      readable.push(read(doc));
    } catch (error) {
      if (!(error instanceof UnreadableValue)) throw error;
      report?.(collection, keyOf(doc, collection === 'products' ? 'id' : 'ulid'), error.message);
    }
  }
  return readable;
}

/** Rounds a window reads on past unreadable documents to fill itself. */
const REFILLS = 3;

/**
 * A keyset window of readable documents: an unreadable one is left out and the window reads on
 * past the last stored row, so `first: n` still gets n and the look-ahead row still tells
 * whether there is more. `past` is the same window after a row, for `limit` rows.
 */
export async function fillWindow<T, W extends { limit: number }>(
  window: W,
  stored: (window: W) => Promise<Raw[]>,
  read: (rows: Raw[]) => T[],
  past: (window: W, row: Raw, limit: number) => W,
  refills = REFILLS,
): Promise<T[]> {
  const rows = await stored(window);
  const items = read(rows);
  if (items.length === rows.length || rows.length < window.limit || refills === 0) return items;
  const rest = await fillWindow(
    past(window, rows.at(-1)!, window.limit - items.length),
    stored,
    read,
    past,
    refills - 1,
  );
  return [...items, ...rest];
}
