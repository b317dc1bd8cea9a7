/** What GraphiQL opens with: a products page, ready to run. */
export const GRAPHIQL_DEFAULT_QUERY = /* GraphQL */ `
  # Storefront Gateway. Orders need a token: add the header
  # {"Authorization": "Bearer <token>"} below (npm run token -- --sub <customer>).
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
