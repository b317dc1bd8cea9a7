import { jsonResponse } from './fetch-api';
import type { Edge } from './router';

export interface NotFoundOptions {
  /** The one path left to Yoga (with or without a trailing slash). */
  graphqlEndpoint: string;
}

/**
 * Our JSON 404 for every request no plugin before it answered (`//api/v1/products`,
 * `/api/v1%2Fproducts`, `/metrics/`), where Yoga's own is an empty body. Yoga also takes any
 * URL that merely ends in the endpoint (`/x/graphql`) as GraphQL: here only the endpoint is.
 */
export function notFoundEdge({ graphqlEndpoint }: NotFoundOptions): Edge {
  return {
    routes: {
      paths: { [graphqlEndpoint]: null, [`${graphqlEndpoint}/`]: null },
      other: () => jsonResponse(404, { message: 'Not Found.' }),
    },
  };
}
