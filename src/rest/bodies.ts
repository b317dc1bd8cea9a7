import { z } from 'zod';
import { MAX_PER_PAGE } from '../catalog/product-query';
import { FULFILLMENT_STATUSES, PAYMENT_STATUSES } from '../db/documents';
import { ULID_PATTERN } from '../format/ulid';

/**
 * The /api/v1 bodies, one zod schema each: the OpenAPI schemas, and (src/rest/selection.ts) the GraphQL
 * selections that produce them. Adding a property here adds it to the response and the document.
 */

const timestamp = () =>
  z.string().meta({
    format: 'date-time',
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\+00:00$',
    description: 'ISO 8601 timestamp in UTC with an explicit offset and no fraction.',
    examples: ['2026-03-14T09:26:53+00:00'],
  });
const positive = () => z.int().min(1);
const currencyCode = (description: string) =>
  z
    .string()
    .regex(/^[A-Z]{3}$/)
    .meta({ description, examples: ['USD'] });
const formatted = () =>
  z.string().meta({
    description: 'Currency symbol plus the amount with grouping and exactly two decimals.',
    examples: ['$1,025.50'],
  });

export const ProductMoney = z
  .strictObject({
    amount: z
      .string()
      .regex(/^[0-9]+$/)
      .meta({
        description: 'The amount in minor currency units, digits only.',
        examples: ['102550'],
      }),
    currency: currencyCode('ISO 4217 currency code.'),
    formatted: formatted(),
    decimal: z
      .string()
      .regex(/^-?[0-9]+\.[0-9]{2}$/)
      .meta({
        description: 'Decimal amount with two fraction digits and no grouping.',
        examples: ['1025.50'],
      }),
    localized_decimal: z
      .string()
      .meta({ description: 'Grouped two-decimal notation of the store locale.', examples: ['1,025.50'] }),
  })
  .meta({ id: 'ProductMoney', description: 'A product amount. All members are strings.' });

export const Variant = z
  .strictObject({
    id: positive(),
    name: z.string(),
    price: ProductMoney,
    face_value: ProductMoney,
  })
  .meta({
    id: 'Variant',
    description:
      'The one variant of a product entry (exactly one per product). `price` is the selling price; ' +
      '`face_value` the nominal value, which may equal the price.',
  });

export const Product = z
  .strictObject({
    id: positive(),
    name: z.string(),
    url: z.string().meta({ description: 'Address of the product page.' }),
    description: z.string(),
    short_description: z.string(),
    notes: z.string().nullable().meta({ description: 'Null when there are no notes.' }),
    category_name: z.string(),
    brand_name: z.string(),
    brand_id: z.string().meta({ description: 'Identifier of the brand.' }),
    images: z.array(z.string()).meta({ description: 'Image references; may contain one or more entries.' }),
    region: z.string().meta({ description: 'Region the product is valid for.' }),
    channel: z.enum(['API', 'Non API']),
    tags: z.array(z.string()).meta({ description: 'May be empty.' }),
    isPermanentOutOfStock: z.boolean().meta({ description: 'Camel case exactly as written.' }),
    discount_percentage: z.int().min(0).max(100).meta({ description: '0 when there is no discount.' }),
    variant: Variant,
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Product', description: 'A product of the catalogue.' });

const pageUrl = (description: string) => z.url().meta({ description });

export const PageLinks = z
  .strictObject({
    first: pageUrl('Address of the first page.'),
    last: pageUrl('Address of the last page.'),
    prev: pageUrl('Address of the previous page; null on page 1.').nullable(),
    next: pageUrl('Address of the next page; null on or past the last page.').nullable(),
  })
  .meta({
    id: 'PageLinks',
    description:
      'Absolute URLs of neighbouring pages. They keep the request’s other query parameters and set `page`.',
  });

export const PageMeta = z
  .strictObject({
    current_page: positive(),
    from: positive()
      .nullable()
      .meta({ description: '1-based position of the first item on this page; null when the page is empty.' }),
    last_page: positive().meta({ description: 'max(1, ceil(total / per_page)).' }),
    per_page: z.int().min(1).max(MAX_PER_PAGE),
    to: positive()
      .nullable()
      .meta({ description: '1-based position of the last item on this page; null when the page is empty.' }),
    total: z.int().min(0).meta({ description: 'Total number of matching items.' }),
  })
  .meta({ id: 'PageMeta', description: 'Position of the page in the whole result.' });

export const ProductPage = z
  .strictObject({
    data: z.array(Product).meta({ description: 'Items of the requested page.' }),
    links: PageLinks,
    meta: PageMeta,
  })
  .meta({
    id: 'ProductPage',
    description: 'One page of products, ordered by `id` ascending. A page past the end is empty.',
  });

export const OrderMoney = z
  .strictObject({
    amount: z
      .number()
      .meta({ description: 'Decimal amount in major currency units, e.g. `1025.5`.', examples: [1025.5] }),
    formatted: formatted(),
  })
  .meta({ id: 'OrderMoney', description: 'An order amount.' });

export const OrderItem = z
  .strictObject({
    id: positive(),
    product_name: z.string(),
    variant_name: z.string(),
    quantity: positive(),
    unit_price: OrderMoney,
    total_price: OrderMoney,
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'OrderItem', description: 'One line of an order.' });

export const Order = z
  .strictObject({
    id: positive().meta({ description: 'Numeric identifier of the order.' }),
    ulid: z
      .string()
      .regex(new RegExp(ULID_PATTERN))
      .meta({
        description:
          'Identifier used in the path of the order endpoint (canonical upper-case Crockford base32).',
        examples: ['01KE78KGFSQ4ZC7N2XW8RTB3MD'],
      }),
    order_number: z.string().meta({ description: 'Human-readable order number.' }),
    fulfillment_status: z.enum(FULFILLMENT_STATUSES),
    payment_status: z.enum(PAYMENT_STATUSES),
    subtotal: OrderMoney,
    conversion_fees: OrderMoney,
    total: OrderMoney,
    currency: currencyCode('Currency code of the order.'),
    items: z.array(OrderItem),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Order', description: 'One order of a customer.' });

export const ErrorMessage = z
  .strictObject({ message: z.string() })
  .meta({ id: 'ErrorMessage', description: 'The body of every error response except validation errors.' });

export const ValidationError = z
  .strictObject({
    message: z.string().meta({ description: 'The first error message, plus "(and N more errors)".' }),
    errors: z
      .record(z.string(), z.array(z.string()).min(1))
      .meta({ description: 'Messages for each invalid parameter, keyed by its name.', minProperties: 1 }),
  })
  .meta({ id: 'ValidationError', description: 'Invalid query parameters (Laravel style).' });
