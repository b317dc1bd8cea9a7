import type { ServerId } from './servers';

/**
 * What the bench asks each server. A scenario is one kind of request; every server that takes
 * part gets its own equivalent of it (REST path, SOFA path or GraphQL document).
 */

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Scenario {
  id: string;
  title: string;
  api: 'rest' | 'graphql';
  requests: Partial<Record<ServerId, RequestSpec>>;
  /**
   * A REST scenario's GraphQL twin: the scenario whose operation the adapter runs for it. Its
   * yoga-jit figure is the REST one's floor (yoga-jit serves no /api/v1).
   */
  graphqlTwin?: string;
}

export interface ScenarioData {
  products: number;
  perPage: number;
  /** An existing order and a token for its owner. */
  orderUlid: string;
  orderToken: string;
  listSearch: string;
  searchTerm: string;
}

/**
 * The fields /api/v1 returns, in GraphQL terms: every GraphQL server is asked for the same data.
 * Written out without fragments: our server's depth limit (graphql-armor) counts each fragment
 * spread as a level, and the nested-fragment form of this query is rejected as depth 11 > 10.
 */
const MONEY = 'amount currency formatted decimal localizedDecimal';
const PAGE_SELECTION = /* GraphQL */ `{
  items {
    databaseId name url description shortDescription notes categoryName brandName brandId
    images region channel tags isPermanentOutOfStock discountPercentage
    variant { databaseId name price { ${MONEY} } faceValue { ${MONEY} } }
    createdAt updatedAt
  }
  currentPage perPage total lastPage from to
}`;

const PRODUCT_PAGE = /* GraphQL */ `
  query BenchProductPage($page: Int, $perPage: Int, $search: String) {
    productPage(page: $page, perPage: $perPage, search: $search) ${PAGE_SELECTION}
  }
`;

const SEARCH_PAGE = /* GraphQL */ `
  query BenchSearchPage($term: String!, $page: Int, $perPage: Int) {
    searchProductPage(term: $term, page: $page, perPage: $perPage) ${PAGE_SELECTION}
  }
`;

const ORDER_SELECTION = /* GraphQL */ `
  {
    databaseId
    ulid
    orderNumber
    fulfillmentStatus
    paymentStatus
    subtotal {
      amount
      formatted
    }
    conversionFees {
      amount
      formatted
    }
    total {
      amount
      formatted
    }
    currency
    items {
      databaseId
      productName
      variantName
      quantity
      unitPrice {
        amount
        formatted
      }
      totalPrice {
        amount
        formatted
      }
      createdAt
      updatedAt
    }
    createdAt
    updatedAt
  }
`;

const ORDER = /* GraphQL */ `
  query BenchOrder($ulid: ID!) {
    order(ulid: $ulid) ${ORDER_SELECTION}
  }
`;

const VIEWER_ORDERS = /* GraphQL */ `
  query BenchViewerOrders($first: Int) {
    viewer {
      orders(first: $first) {
        edges { node ${ORDER_SELECTION} }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
`;

const CATEGORIES = /* GraphQL */ `
  query BenchCategories {
    categories {
      name
      productCount
    }
  }
`;

/** Orders per page of the order-list scenario (the connection's default size is larger). */
export const ORDER_LIST_SIZE = 10;

const compact = (document: string) => document.replace(/\s+/g, ' ').trim();

function graphql(
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string> = {},
): RequestSpec {
  return {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query: compact(query), variables }),
  };
}

const get = (path: string, headers: Record<string, string> = {}): RequestSpec => ({
  method: 'GET',
  path,
  headers,
});

function onGraphQLServers(request: RequestSpec, baseline: RequestSpec, cached = false): Scenario['requests'] {
  return {
    baseline,
    ours: request,
    'ours-bare': request,
    ...(cached ? { 'ours-cached': request } : {}),
    apollo: request,
    mercurius: request,
    'mercurius-jit': request,
    'lever-proto': request,
    'yoga-jit': request,
  };
}

export function middlePage(products: number, perPage: number): number {
  return Math.max(1, Math.ceil(Math.ceil(products / perPage) / 2));
}

export function buildScenarios(data: ScenarioData): Scenario[] {
  const middle = middlePage(data.products, data.perPage);
  const auth = { authorization: `Bearer ${data.orderToken}` };
  const listSearch = encodeURIComponent(data.listSearch);
  const term = encodeURIComponent(data.searchTerm);
  return [
    {
      id: 'rest-products-p1',
      title: 'REST product list, page 1 (GET /api/v1/products)',
      api: 'rest',
      graphqlTwin: 'gql-product-page',
      requests: {
        baseline: get('/api/v1/products'),
        ours: get('/api/v1/products'),
        'ours-bare': get('/api/v1/products'),
        'ours-cached': get('/api/v1/products'),
        sofa: get('/api/product-page'),
      },
    },
    {
      id: 'rest-products-middle',
      title: `REST product list, middle page (page=${middle})`,
      api: 'rest',
      requests: {
        baseline: get(`/api/v1/products?page=${middle}`),
        ours: get(`/api/v1/products?page=${middle}`),
        'ours-bare': get(`/api/v1/products?page=${middle}`),
        sofa: get(`/api/product-page?page=${middle}`),
      },
    },
    {
      id: 'rest-products-search',
      title: `REST product list with search (search=${data.listSearch})`,
      api: 'rest',
      graphqlTwin: 'gql-product-page-search',
      requests: {
        baseline: get(`/api/v1/products?search=${listSearch}`),
        ours: get(`/api/v1/products?search=${listSearch}`),
        'ours-bare': get(`/api/v1/products?search=${listSearch}`),
        sofa: get(`/api/product-page?search=${listSearch}`),
      },
    },
    {
      id: 'rest-search',
      title: `REST search (GET /api/v1/products/search?term=${data.searchTerm})`,
      api: 'rest',
      graphqlTwin: 'gql-search-page',
      requests: {
        baseline: get(`/api/v1/products/search?term=${term}`),
        ours: get(`/api/v1/products/search?term=${term}`),
        'ours-bare': get(`/api/v1/products/search?term=${term}`),
      },
    },
    {
      id: 'rest-order',
      title: "REST order with the owner's token (GET /api/v1/orders/{ulid})",
      api: 'rest',
      graphqlTwin: 'gql-order',
      requests: {
        baseline: get(`/api/v1/orders/${data.orderUlid}`, auth),
        ours: get(`/api/v1/orders/${data.orderUlid}`, auth),
        'ours-bare': get(`/api/v1/orders/${data.orderUlid}`, auth),
      },
    },
    {
      id: 'gql-product-page',
      title: 'GraphQL productPage, page 1 (baseline: the REST list)',
      api: 'graphql',
      requests: onGraphQLServers(graphql(PRODUCT_PAGE, { page: 1 }), get('/api/v1/products'), true),
    },
    {
      id: 'gql-product-page-search',
      title: `GraphQL productPage with search "${data.listSearch}" (baseline: the REST list)`,
      api: 'graphql',
      requests: onGraphQLServers(
        graphql(PRODUCT_PAGE, { page: 1, search: data.listSearch }),
        get(`/api/v1/products?search=${listSearch}`),
      ),
    },
    {
      id: 'gql-search-page',
      title: `GraphQL searchProductPage "${data.searchTerm}" (baseline: the REST search)`,
      api: 'graphql',
      requests: onGraphQLServers(
        graphql(SEARCH_PAGE, { term: data.searchTerm, page: 1 }),
        get(`/api/v1/products/search?term=${term}`),
      ),
    },
    {
      id: 'gql-order',
      title: "GraphQL order with the owner's token (baseline: the REST order)",
      api: 'graphql',
      requests: onGraphQLServers(
        graphql(ORDER, { ulid: data.orderUlid }, auth),
        get(`/api/v1/orders/${data.orderUlid}`, auth),
      ),
    },
    {
      id: 'gql-viewer-orders',
      title: `GraphQL viewer.orders(first: ${ORDER_LIST_SIZE}), the owner's newest orders (baseline: the same list as JSON)`,
      api: 'graphql',
      requests: onGraphQLServers(
        graphql(VIEWER_ORDERS, { first: ORDER_LIST_SIZE }, auth),
        get(`/bench/viewer-orders?first=${ORDER_LIST_SIZE}`, auth),
      ),
    },
    {
      id: 'gql-categories',
      title: 'GraphQL categories with their product counts (baseline: the same list as JSON)',
      api: 'graphql',
      requests: onGraphQLServers(graphql(CATEGORIES, {}), get('/bench/categories')),
    },
  ];
}
