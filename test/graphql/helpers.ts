import { expect } from 'vitest';
import type { ProductDoc } from '../../src/db/documents';
import { FIXTURE_PRODUCTS } from '../../seed/fixtures';
import type { GraphQLReply } from '../support/server';

/**
 * Shared pieces of the GraphQL tests. Expected values are computed here from seed/fixtures.ts and
 * the contract, never with the server's own helpers, so a test cannot agree with a bug.
 */

/** Every field of a Product, in schema terms. */
export const PRODUCT_FIELDS = /* GraphQL */ `
  fragment AllProductFields on Product {
    id
    databaseId
    name
    url
    description
    shortDescription
    notes
    categoryName
    brandName
    brandId
    images
    region
    channel
    tags
    isPermanentOutOfStock
    discountPercentage
    variant {
      id
      databaseId
      name
      price {
        ...AllProductMoney
      }
      faceValue {
        ...AllProductMoney
      }
    }
    createdAt
    updatedAt
  }
  fragment AllProductMoney on ProductMoney {
    amount
    currency
    formatted
    decimal
    localizedDecimal
  }
`;

/** Every field of an Order and its items. */
export const ORDER_FIELDS = /* GraphQL */ `
  fragment AllOrderFields on Order {
    id
    databaseId
    ulid
    orderNumber
    fulfillmentStatus
    paymentStatus
    subtotal {
      ...AllOrderMoney
    }
    conversionFees {
      ...AllOrderMoney
    }
    total {
      ...AllOrderMoney
    }
    currency
    items {
      id
      databaseId
      productName
      variantName
      quantity
      unitPrice {
        ...AllOrderMoney
      }
      totalPrice {
        ...AllOrderMoney
      }
      createdAt
      updatedAt
    }
    createdAt
    updatedAt
  }
  fragment AllOrderMoney on OrderMoney {
    amount
    currency
    formatted
  }
`;

/** base64url("Typename:id"), the documented global ID format. */
export function globalId(typename: string, id: number | string): string {
  return Buffer.from(`${typename}:${id}`, 'utf8').toString('base64url');
}

/** The data of a reply that must have succeeded. */
export function dataOf<T = Record<string, unknown>>(reply: GraphQLReply): T {
  expect(reply.body.errors, JSON.stringify(reply.body.errors)).toBeUndefined();
  expect(reply.status).toBe(200);
  return reply.body.data as T;
}

/** Asserts exactly one error with the given code and returns it. */
export function singleError(reply: GraphQLReply, code: string) {
  const errors = reply.body.errors ?? [];
  expect(errors, JSON.stringify(reply.body)).toHaveLength(1);
  const [error] = errors;
  expect(error?.extensions?.code, JSON.stringify(error)).toBe(code);
  return error!;
}

/** The contract's matching rule, written independently of the repository. */
export function matchesSearch(product: ProductDoc, text: string): boolean {
  const words = text.split(/\s+/u).filter(Boolean);
  const haystack = [
    product.name,
    product.short_description,
    product.brand_name,
    product.category_name,
    ...product.tags,
  ].map((value) => value.toLowerCase());
  return words.every((word) => haystack.some((value) => value.includes(word.toLowerCase())));
}

export function fixtureIds(filter: (product: ProductDoc) => boolean = () => true): number[] {
  return FIXTURE_PRODUCTS.filter(filter).map((product) => product.id);
}

export const ALL_PRODUCT_IDS = fixtureIds();

/** A connection page's selection as ConnectionReply reads it (add `totalCount` where wanted). */
export const CONNECTION_PAGE = /* GraphQL */ `
  edges {
    cursor
    node {
      databaseId
    }
  }
  pageInfo {
    hasNextPage
    hasPreviousPage
    startCursor
    endCursor
  }
`;

export interface ConnectionReply {
  totalCount?: number;
  edges: { cursor: string; node: { databaseId: number } }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

export const idsOf = (connection: ConnectionReply) => connection.edges.map((edge) => edge.node.databaseId);

/** Timestamps on the wire: no fraction, explicit +00:00 offset. */
export const CONTRACT_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;

export function contractTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`;
}
