import { parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';

/**
 * The GraphQL operations behind /api/v1. Aliases give every field its /api/v1 name, in the
 * contract's order, so a response body is the operation's result and nothing is renamed by hand.
 */

const PRODUCT_FIELDS = /* GraphQL */ `
  fragment RestProduct on Product {
    id: databaseId
    name
    url
    description
    short_description: shortDescription
    notes
    category_name: categoryName
    brand_name: brandName
    brand_id: brandId
    images
    region
    channel
    tags
    isPermanentOutOfStock
    discount_percentage: discountPercentage
    variant {
      id: databaseId
      name
      price {
        ...RestProductMoney
      }
      face_value: faceValue {
        ...RestProductMoney
      }
    }
    created_at: createdAt
    updated_at: updatedAt
  }
  fragment RestProductMoney on ProductMoney {
    amount
    currency
    formatted
    decimal
    localized_decimal: localizedDecimal
  }
  fragment RestPage on ProductPage {
    items {
      ...RestProduct
    }
    currentPage
    perPage
    total
    lastPage
    from
    to
  }
`;

const ORDER = /* GraphQL */ `
  query RestOrder($ulid: ID!) {
    order(ulid: $ulid) {
      id: databaseId
      ulid
      order_number: orderNumber
      fulfillment_status: fulfillmentStatus
      payment_status: paymentStatus
      subtotal {
        ...RestOrderMoney
      }
      conversion_fees: conversionFees {
        ...RestOrderMoney
      }
      total {
        ...RestOrderMoney
      }
      currency
      items {
        id: databaseId
        product_name: productName
        variant_name: variantName
        quantity
        unit_price: unitPrice {
          ...RestOrderMoney
        }
        total_price: totalPrice {
          ...RestOrderMoney
        }
        created_at: createdAt
        updated_at: updatedAt
      }
      created_at: createdAt
      updated_at: updatedAt
    }
  }
  fragment RestOrderMoney on OrderMoney {
    amount
    formatted
  }
`;

const PRODUCT_LIST = /* GraphQL */ `
  query RestProductList($page: Int, $perPage: Int, $search: String, $category: String) {
    page: productPage(page: $page, perPage: $perPage, search: $search, category: $category) {
      ...RestPage
    }
  }
  ${PRODUCT_FIELDS}
`;

const PRODUCT_SEARCH = /* GraphQL */ `
  query RestProductSearch($term: String!, $page: Int, $perPage: Int) {
    page: searchProductPage(term: $term, page: $page, perPage: $perPage) {
      ...RestPage
    }
  }
  ${PRODUCT_FIELDS}
`;

export interface RestOperations {
  order: DocumentNode;
  productList: DocumentNode;
  productSearch: DocumentNode;
}

/** Parsed and validated once at start-up, so requests skip both steps. */
export function prepareRestOperations(schema: GraphQLSchema): RestOperations {
  const operations = {
    order: parse(ORDER),
    productList: parse(PRODUCT_LIST),
    productSearch: parse(PRODUCT_SEARCH),
  };
  for (const [name, document] of Object.entries(operations)) {
    const errors = validate(schema, document);
    if (errors.length > 0)
      throw new Error(`REST operation ${name} does not match the schema: ${errors[0]?.message}`);
  }
  return operations;
}
