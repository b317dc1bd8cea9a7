import type { GraphiqlOptions } from './http/use-graphiql';

/**
 * What GraphiQL opens with: one operation, so Run runs it at once (two opened an operation
 * picker), and comments within the editor's width (about 48 characters at 1280 px).
 */
export const GRAPHIQL_DEFAULT_QUERY = /* GraphQL */ `
  # Storefront Gateway: press Run for
  # a page of products.
  #
  # Your orders need a token in Headers:
  # {"Authorization": "Bearer <token>"}
  # (npm run token -- --sub cus_alice)
  # and this query:
  #   { viewer { orders(first: 5) {
  #     edges { node { orderNumber } } } } }

  query FirstProducts {
    products(first: 5) {
      totalCount
      edges {
        cursor
        node {
          id
          name
          categoryName
          variant {
            price {
              formatted
            }
          }
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`;

/** The GraphiQL site (src/http/use-graphiql.ts) this server serves. */
export const GRAPHIQL_SITE: Pick<GraphiqlOptions, 'loadBundle' | 'settings'> = {
  // Served from the package, not a CDN, so it works offline. The bundle is a 9 MB module: loaded
  // on the first visit, not by every server process at start.
  loadBundle: () => import('@graphql-yoga/render-graphiql/graphiql'),
  settings: {
    title: 'Storefront Gateway',
    defaultQuery: GRAPHIQL_DEFAULT_QUERY,
    // Subscriptions too go as a JSON POST (GraphiQL's default is a GET, which the CSRF check
    // refuses without a custom header): the live-orders streams work in it.
    method: 'POST',
  },
};
