import { expect } from 'vitest';
import type { TestServer } from './server';

/** A search's first 100 ids and its total, as one API answers it. */
export interface SearchAnswer {
  ids: number[];
  total: number;
}

export async function restSearch(server: Pick<TestServer, 'request'>, term: string): Promise<SearchAnswer> {
  const response = await server.request(`/api/v1/products/search?term=${term}&per_page=100`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { data: { id: number }[]; meta: { total: number } };
  return { ids: body.data.map((product) => product.id), total: body.meta.total };
}

export async function graphqlSearch(
  server: Pick<TestServer, 'graphql'>,
  term: string,
): Promise<SearchAnswer> {
  const reply = await server.graphql(
    `query ($term: String!) { searchProducts(term: $term, first: 100) { totalCount edges { node { databaseId } } } }`,
    { term },
  );
  const connection = (
    reply.body as {
      data: { searchProducts: { totalCount: number; edges: { node: { databaseId: number } }[] } };
    }
  ).data.searchProducts;
  return { ids: connection.edges.map((edge) => edge.node.databaseId), total: connection.totalCount };
}
