import { z } from 'zod';
import {
  DEFAULT_PAGE,
  DEFAULT_PER_PAGE,
  MAX_PAGE,
  MAX_PER_PAGE,
  MAX_TERM_LENGTH,
} from '../catalog/product-query';
import { statusFromEnumName } from '../format/status';
import { Order, Product, ProductPage } from './bodies';
import { defineEndpoint, type Endpoint } from './endpoint';
import { pageEnvelope, type GraphqlPage } from './pagination';
import { integerField, textField } from './query';
import { selectionOf } from './selection';

/** The /api/v1 endpoint table. */

const page = integerField('page', {
  max: MAX_PAGE,
  default: DEFAULT_PAGE,
  description: 'Page number, an integer ≥ 1. A page past the end answers 200 with empty `data`.',
});
const perPage = integerField('per_page', {
  max: MAX_PER_PAGE,
  default: DEFAULT_PER_PAGE,
  description: `Items per page, an integer from 1 to ${MAX_PER_PAGE}.`,
});
const MATCHING =
  'The text is split on whitespace; every word must occur, case-insensitively, in at least one of ' +
  '`name`, `short_description`, `brand_name`, `category_name` or one of `tags`. The text is matched ' +
  `literally: regular-expression characters have no special meaning. More than ${MAX_TERM_LENGTH} characters answers 422.`;

const PAGE_FIELDS = `items ${selectionOf(Product)} currentPage perPage total lastPage from to`;
const PAGE_RULES =
  '`page` and `per_page` must be integers ≥ 1 and `per_page` at most 100; anything else answers 422 naming each bad parameter.';

const productPageBody = (data: Record<string, unknown>, request: Parameters<Endpoint['body']>[1]) =>
  pageEnvelope(data.page as GraphqlPage, request);

export const listProducts = defineEndpoint({
  path: '/api/v1/products',
  match: (path) => (path === '/api/v1/products' ? {} : null),
  operationId: 'listProducts',
  summary: 'List products',
  description: `A page of products, optionally filtered. Public: no token needed. Products are ordered by \`id\` ascending. ${PAGE_RULES}`,
  tag: 'Products',
  query: z.object({
    search: textField('search', {
      description: `Term to filter products; empty or blank means no filter. ${MATCHING}`,
    }),
    category: textField('category', {
      description: `Category name; matches \`category_name\` exactly, case-insensitively. More than ${MAX_TERM_LENGTH} characters answers 422.`,
    }),
    page,
    per_page: perPage,
  }),
  document: `query RestProductList($page: Int, $perPage: Int, $search: String, $category: String) {
    page: productPage(page: $page, perPage: $perPage, search: $search, category: $category) { ${PAGE_FIELDS} }
  }`,
  variables: (query) => ({
    page: query.page,
    perPage: query.per_page,
    search: query.search,
    category: query.category,
  }),
  body: productPageBody,
  response: { description: 'A page of products.', schema: ProductPage },
  errors: [422, 500, 503],
  cacheable: true,
});

export const searchProducts = defineEndpoint({
  path: '/api/v1/products/search',
  match: (path) => (path === '/api/v1/products/search' ? {} : null),
  operationId: 'searchProducts',
  summary: 'Search products',
  description: `A page of the products that match a required term. Public: no token needed. ${MATCHING.replace(/ More than .*$/, '')} Products are ordered by \`id\` ascending. ${PAGE_RULES}`,
  tag: 'Products',
  query: z.object({
    term: textField('term', {
      required: true,
      description: `Term to find products. Missing or blank answers 422 ("The term field is required."); more than ${MAX_TERM_LENGTH} characters answers 422.`,
    }),
    page,
    per_page: perPage,
  }),
  document: `query RestProductSearch($term: String!, $page: Int, $perPage: Int) {
    page: searchProductPage(term: $term, page: $page, perPage: $perPage) { ${PAGE_FIELDS} }
  }`,
  variables: (query) => ({ term: query.term, page: query.page, perPage: query.per_page }),
  body: productPageBody,
  response: { description: 'A page of matching products.', schema: ProductPage },
  errors: [422, 500, 503],
  cacheable: true,
});

const ORDER_PATH = /^\/api\/v1\/orders\/([^/]+)$/;

export const getOrder = defineEndpoint({
  path: '/api/v1/orders/{order}',
  match: (path) => {
    const segment = ORDER_PATH.exec(path)?.[1];
    return segment === undefined ? null : { order: safeDecode(segment) };
  },
  operationId: 'getOrder',
  summary: 'Get order',
  description:
    'Retrieve the details of one order. Requires a bearer token: an order is visible to its own customer ' +
    '(the token’s `sub`) and to tokens whose `scope` contains `orders:read:all`. Authentication is checked ' +
    'before the order is looked up.',
  tag: 'Orders',
  secured: true,
  params: z.object({
    order: z.string().meta({
      param: {
        description:
          'The `ulid` field of the order, matched case-insensitively. A segment that is not a valid ULID answers 404.',
        example: '01KE78KGFSQ4ZC7N2XW8RTB3MD',
      },
    }),
  }),
  query: z.object({}),
  document: `query RestOrder($ulid: ID!) { order(ulid: $ulid) ${selectionOf(Order)} }`,
  variables: (_query, params) => ({ ulid: params.order }),
  body: (data) => {
    const order = data.order as Record<string, unknown>;
    return {
      ...order,
      fulfillment_status: statusFromEnumName(String(order.fulfillment_status)),
      payment_status: statusFromEnumName(String(order.payment_status)),
    };
  },
  response: { description: 'The order.', schema: Order },
  errors: [401, 403, 404, 500, 503],
  cacheable: false,
});

export const REST_ENDPOINTS: readonly Endpoint[] = [listProducts, searchProducts, getOrder];

/** The endpoint a request path names, and its path parameters. */
export function matchEndpoint(
  pathname: string,
): { endpoint: Endpoint; params: Record<string, string> } | null {
  for (const endpoint of REST_ENDPOINTS) {
    const params = endpoint.match(pathname);
    if (params) return { endpoint, params };
  }
  return null;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
