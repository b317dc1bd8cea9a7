/** What GraphiQL opens with: a products page and the caller's latest orders, ready to run. */
export const GRAPHIQL_DEFAULT_QUERY = /* GraphQL */ `
  # Storefront Gateway. Run FirstProducts as it is. MyOrders needs a token: add the header
  # {"Authorization": "Bearer <token>"} below (npm run token -- --sub cus_alice).
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

  query MyOrders {
    viewer {
      customerId
      orders(first: 5) {
        totalCount
        edges {
          node {
            ulid
            orderNumber
            fulfillmentStatus
            paymentStatus
            total {
              formatted
            }
            createdAt
          }
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
`;
