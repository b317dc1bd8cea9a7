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
