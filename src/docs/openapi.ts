/**
 * The published /api/v1 interface (shared/spec/storefront-api.md) with the binding decisions of
 * shared/spec/contract.md, as an OpenAPI 3.1 document. It is the single machine-readable source
 * for the docs page, the response-conformance test helper and the schemathesis fuzz run, so every
 * object schema is closed (`additionalProperties: false`) and lists every field as required.
 */

// A minimal model of the OpenAPI 3.1 objects this document uses (schemas are JSON Schema 2020-12).

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonSchemaType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

export interface Schema {
  $ref?: string;
  type?: JsonSchemaType | JsonSchemaType[];
  description?: string;
  enum?: JsonValue[];
  const?: JsonValue;
  default?: JsonValue;
  examples?: JsonValue[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  minItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  allOf?: Schema[];
}

export interface Reference {
  $ref: string;
  summary?: string;
  description?: string;
}

export interface MediaType {
  schema: Schema;
  example?: JsonValue;
}

export interface Header {
  description?: string;
  required?: boolean;
  schema: Schema;
}

export interface Response {
  description: string;
  headers?: Record<string, Header | Reference>;
  content?: Record<string, MediaType>;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema: Schema;
  example?: JsonValue;
}

export interface Operation {
  operationId: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: (Parameter | Reference)[];
  responses: Record<string, Response | Reference>;
}

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
export type PathItem = Partial<Record<HttpMethod, Operation>>;

export interface SecurityScheme {
  type: 'http';
  scheme: string;
  bearerFormat?: string;
  description?: string;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; summary?: string; description?: string };
  servers?: { url: string; description?: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, Schema>;
    responses: Record<string, Response>;
    parameters: Record<string, Parameter>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}

export interface OpenApiDocumentOptions {
  /**
   * Public base URL of the service (no `/api/v1` suffix), e.g. `https://shop.example.com`.
   * Default: none, so no `servers` entry is written and clients resolve the paths against the
   * address the document was fetched from (OpenAPI's implicit server `/`).
   */
  serverUrl?: string;
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string): Reference => ({ $ref: `#/components/responses/${name}` });

/** A closed object: exactly these properties, all of them required. */
function closedObject(description: string, properties: Record<string, Schema>): Schema {
  return {
    type: 'object',
    description,
    additionalProperties: false,
    required: Object.keys(properties),
    properties,
  };
}

const TIMESTAMP: Schema = {
  type: 'string',
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\+00:00$',
  description: 'ISO 8601 timestamp in UTC with an explicit offset and no fraction.',
  examples: ['2026-03-14T09:26:53+00:00'],
};

const CURRENCY: Schema = {
  type: 'string',
  pattern: '^[A-Z]{3}$',
  description: 'ISO 4217 currency code.',
  examples: ['USD'],
};

const ID: Schema = { type: 'integer', minimum: 1 };

const MAX_PER_PAGE = 100;
const MAX_TERM_LENGTH = 200;

const ORDER_NOT_FOUND = 'Order not found.';

/** An error body whose message is fixed by the contract. */
function fixedMessage(message: string): Schema {
  return {
    allOf: [ref('ErrorMessage'), { type: 'object', properties: { message: { const: message } } }],
  };
}

function jsonResponse(description: string, schema: Schema, example?: JsonValue): Response {
  return {
    description,
    content: {
      'application/json': { schema, ...(example === undefined ? {} : { example }) },
    },
  };
}

const schemas: Record<string, Schema> = {
  OrderMoney: closedObject('An order amount.', {
    amount: {
      type: 'number',
      description: 'Decimal amount in major currency units, e.g. `1025.5`.',
      examples: [1025.5],
    },
    formatted: {
      type: 'string',
      description: 'Currency symbol plus the amount with grouping and exactly two decimals.',
      examples: ['$1,025.50'],
    },
  }),

  OrderItem: closedObject('One line of an order.', {
    id: ID,
    product_name: { type: 'string' },
    variant_name: { type: 'string' },
    quantity: { type: 'integer', minimum: 1 },
    unit_price: ref('OrderMoney'),
    total_price: ref('OrderMoney'),
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  }),

  Order: closedObject('One order of a customer.', {
    id: { ...ID, description: 'Numeric identifier of the order.' },
    ulid: {
      type: 'string',
      pattern: '^[0-9A-HJKMNP-TV-Z]{26}$',
      description:
        'Identifier used in the path of the order endpoint (canonical upper-case Crockford base32).',
      examples: ['01KE78KGFSQ4ZC7N2XW8RTB3MD'],
    },
    order_number: { type: 'string', description: 'Human-readable order number.' },
    fulfillment_status: {
      type: 'string',
      enum: ['pending', 'processing', 'partially_fulfilled', 'completed', 'refunded'],
    },
    payment_status: { type: 'string', enum: ['pending', 'completed'] },
    subtotal: ref('OrderMoney'),
    conversion_fees: ref('OrderMoney'),
    total: ref('OrderMoney'),
    currency: { ...CURRENCY, description: 'Currency code of the order.' },
    items: { type: 'array', items: ref('OrderItem') },
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  }),

  ProductMoney: closedObject('A product amount. All members are strings.', {
    amount: {
      type: 'string',
      pattern: '^[0-9]+$',
      description: 'The amount in minor currency units, digits only.',
      examples: ['102550'],
    },
    currency: CURRENCY,
    formatted: {
      type: 'string',
      description: 'Currency symbol plus the amount with grouping and exactly two decimals.',
      examples: ['$1,025.50'],
    },
    decimal: {
      type: 'string',
      pattern: '^-?[0-9]+\\.[0-9]{2}$',
      description: 'Decimal amount with two fraction digits and no grouping.',
      examples: ['1025.50'],
    },
    localized_decimal: {
      type: 'string',
      description: 'Grouped two-decimal notation of the store locale.',
      examples: ['1,025.50'],
    },
  }),

  Variant: closedObject('The one variant of a product entry.', {
    id: ID,
    name: { type: 'string' },
    price: { ...ref('ProductMoney'), description: 'Selling price.' },
    face_value: { ...ref('ProductMoney'), description: 'Nominal value; may equal price.' },
  }),

  Product: closedObject('A product of the catalogue.', {
    id: ID,
    name: { type: 'string' },
    url: { type: 'string', description: 'Address of the product page.' },
    description: { type: 'string' },
    short_description: { type: 'string' },
    notes: { type: ['string', 'null'], description: 'Null when there are no notes.' },
    category_name: { type: 'string' },
    brand_name: { type: 'string' },
    brand_id: { type: 'string', description: 'Identifier of the brand.' },
    images: {
      type: 'array',
      items: { type: 'string' },
      description: 'Image references; may contain one or more entries.',
    },
    region: { type: 'string', description: 'Region the product is valid for.' },
    channel: { type: 'string', enum: ['API', 'Non API'] },
    tags: { type: 'array', items: { type: 'string' }, description: 'May be empty.' },
    isPermanentOutOfStock: { type: 'boolean', description: 'Camel case exactly as written.' },
    discount_percentage: {
      type: 'integer',
      minimum: 0,
      maximum: 100,
      description: '0 when there is no discount.',
    },
    variant: { ...ref('Variant'), description: 'Exactly one variant object per product entry.' },
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  }),

  PageLinks: closedObject(
    'Absolute URLs of neighbouring pages. They keep the request’s other query parameters and set `page`.',
    {
      first: { type: 'string', format: 'uri', description: 'Address of the first page.' },
      last: { type: 'string', format: 'uri', description: 'Address of the last page.' },
      prev: {
        type: ['string', 'null'],
        format: 'uri',
        description: 'Address of the previous page; null on page 1.',
      },
      next: {
        type: ['string', 'null'],
        format: 'uri',
        description: 'Address of the next page; null on or past the last page.',
      },
    },
  ),

  PageMeta: closedObject('Position of the page in the whole result.', {
    current_page: { type: 'integer', minimum: 1 },
    from: {
      type: ['integer', 'null'],
      minimum: 1,
      description: '1-based position of the first item on this page; null when the page is empty.',
    },
    last_page: { type: 'integer', minimum: 1, description: 'max(1, ceil(total / per_page)).' },
    per_page: { type: 'integer', minimum: 1, maximum: MAX_PER_PAGE },
    to: {
      type: ['integer', 'null'],
      minimum: 1,
      description: '1-based position of the last item on this page; null when the page is empty.',
    },
    total: { type: 'integer', minimum: 0, description: 'Total number of matching items.' },
  }),

  ProductPage: closedObject(
    'One page of products, ordered by `id` ascending. A page past the end is empty.',
    {
      data: { type: 'array', items: ref('Product'), description: 'Items of the requested page.' },
      links: ref('PageLinks'),
      meta: ref('PageMeta'),
    },
  ),

  ErrorMessage: closedObject('The body of every error response except validation errors.', {
    message: { type: 'string' },
  }),

  ValidationError: closedObject('Invalid query parameters (Laravel style).', {
    message: { type: 'string', description: 'The first error message, plus "(and N more errors)".' },
    errors: {
      type: 'object',
      description: 'Messages for each invalid parameter, keyed by its name.',
      minProperties: 1,
      additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 },
    },
  }),
};

const responses: Record<string, Response> = {
  Unauthenticated: {
    ...jsonResponse(
      'Authentication token missing, malformed, expired or badly signed.',
      fixedMessage('Unauthenticated.'),
      { message: 'Unauthenticated.' },
    ),
    headers: {
      'WWW-Authenticate': {
        description: 'The authentication scheme the endpoint expects.',
        required: true,
        schema: { type: 'string', pattern: '^Bearer\\b' },
      },
    },
  },
  Forbidden: jsonResponse(
    'The token is valid and the order exists, but it is not visible to the caller.',
    fixedMessage('This action is unauthorized.'),
    { message: 'This action is unauthorized.' },
  ),
  OrderNotFound: jsonResponse(
    'No order for the given ULID, including a path segment that is not a valid ULID.',
    ref('ErrorMessage'),
    { message: ORDER_NOT_FOUND },
  ),
  ValidationFailed: jsonResponse('A query parameter is invalid.', ref('ValidationError'), {
    message: 'The per page field must not be greater than 100.',
    errors: { per_page: ['The per page field must not be greater than 100.'] },
  }),
  ServiceUnavailable: {
    ...jsonResponse(
      'The database is unreachable. The service recovers by itself when it returns.',
      fixedMessage('Service Unavailable.'),
      { message: 'Service Unavailable.' },
    ),
    headers: {
      'Retry-After': {
        description: 'When to try again (RFC 9110: delay-seconds or an HTTP-date).',
        required: true,
        schema: { type: 'string' },
      },
    },
  },
  ServerError: jsonResponse(
    'Unexpected failure. The body carries no stack or driver text.',
    fixedMessage('Server Error.'),
    { message: 'Server Error.' },
  ),
};

const parameters: Record<string, Parameter> = {
  Page: {
    name: 'page',
    in: 'query',
    required: false,
    description: 'Page number, an integer ≥ 1. A page past the end answers 200 with empty `data`.',
    schema: { type: 'integer', minimum: 1, default: 1 },
  },
  PerPage: {
    name: 'per_page',
    in: 'query',
    required: false,
    description: `Items per page, an integer from 1 to ${MAX_PER_PAGE}.`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PER_PAGE, default: 15 },
  },
};

const MATCHING_RULES =
  'The text is split on whitespace; every word must occur, case-insensitively, in at least one of ' +
  '`name`, `short_description`, `brand_name`, `category_name` or one of `tags`. The text is matched ' +
  'literally: regular-expression characters have no special meaning.';

const PAGINATION_RULES =
  'Products are ordered by `id` ascending. `page` and `per_page` must be integers ≥ 1 and `per_page` ' +
  `at most ${MAX_PER_PAGE}; anything else answers 422 naming each bad parameter.`;

const paths: Record<string, PathItem> = {
  '/api/v1/orders/{order}': {
    get: {
      operationId: 'getOrder',
      tags: ['Orders'],
      summary: 'Get order',
      description:
        'Retrieve the details of one order. Requires a bearer token: an order is visible to its own ' +
        'customer (the token’s `sub`) and to tokens whose `scope` contains `orders:read:all`. ' +
        'Authentication is checked before the order is looked up.',
      security: [{ bearerAuth: [] }],
      parameters: [
        {
          name: 'order',
          in: 'path',
          required: true,
          description:
            'The `ulid` field of the order, matched case-insensitively. A segment that is not a ' +
            'valid ULID answers 404.',
          schema: { type: 'string' },
          // An order of the sample fixtures, so "Try it out" and the fuzzer's examples find one.
          example: '01KE78KGFSQ4ZC7N2XW8RTB3MD',
        },
      ],
      responses: {
        '200': jsonResponse('The order.', ref('Order')),
        '401': responseRef('Unauthenticated'),
        '403': responseRef('Forbidden'),
        '404': responseRef('OrderNotFound'),
        '500': responseRef('ServerError'),
        '503': responseRef('ServiceUnavailable'),
      },
    },
  },
  '/api/v1/products': {
    get: {
      operationId: 'listProducts',
      tags: ['Products'],
      summary: 'List products',
      description: `A page of products, optionally filtered. Public: no token needed. ${PAGINATION_RULES}`,
      parameters: [
        { $ref: '#/components/parameters/Page' },
        { $ref: '#/components/parameters/PerPage' },
        {
          name: 'search',
          in: 'query',
          required: false,
          description: `Term to filter products; empty or blank means no filter. ${MATCHING_RULES} More than ${MAX_TERM_LENGTH} characters answers 422.`,
          schema: { type: 'string', maxLength: MAX_TERM_LENGTH },
        },
        {
          name: 'category',
          in: 'query',
          required: false,
          description: 'Category name; matches `category_name` exactly, case-insensitively.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': jsonResponse('A page of products.', ref('ProductPage')),
        '422': responseRef('ValidationFailed'),
        '500': responseRef('ServerError'),
        '503': responseRef('ServiceUnavailable'),
      },
    },
  },
  '/api/v1/products/search': {
    get: {
      operationId: 'searchProducts',
      tags: ['Products'],
      summary: 'Search products',
      description: `A page of the products that match a required term. Public: no token needed. ${MATCHING_RULES} ${PAGINATION_RULES}`,
      parameters: [
        {
          name: 'term',
          in: 'query',
          required: true,
          description: `Term to find products. Missing or blank answers 422 ("The term field is required."); more than ${MAX_TERM_LENGTH} characters answers 422.`,
          schema: { type: 'string', minLength: 1, maxLength: MAX_TERM_LENGTH, pattern: '\\S' },
        },
        { $ref: '#/components/parameters/Page' },
        { $ref: '#/components/parameters/PerPage' },
      ],
      responses: {
        '200': jsonResponse('A page of matching products.', ref('ProductPage')),
        '422': responseRef('ValidationFailed'),
        '500': responseRef('ServerError'),
        '503': responseRef('ServiceUnavailable'),
      },
    },
  },
};

export function createOpenApiDocument(options: OpenApiDocumentOptions = {}): OpenApiDocument {
  const { serverUrl } = options;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Storefront API',
      version: '1.0.0',
      summary: 'Orders and product catalogue of a digital-goods store.',
      description:
        'Three read-only operations under `/api/v1`. Every response, errors included, is ' +
        '`application/json; charset=utf-8`. Timestamps are ISO 8601 in UTC with an explicit offset ' +
        '(`2026-03-14T09:26:53+00:00`). Unknown paths answer 404 `{"message":"Not Found."}`; a wrong ' +
        'method answers 405 with an `Allow` header.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl.replace(/\/+$/, '') }] } : {}),
    tags: [
      { name: 'Orders', description: 'Orders of the authenticated customer.' },
      { name: 'Products', description: 'The public product catalogue.' },
    ],
    // Cloned so that a caller changing its document never changes the next one.
    paths: structuredClone(paths),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: '`Authorization: Bearer <JWT>`. The token’s `sub` is the customer.',
        },
      },
      schemas: structuredClone(schemas),
      responses: structuredClone(responses),
      parameters: structuredClone(parameters),
    },
  };
}
