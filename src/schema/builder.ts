import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import type { AppContext } from '../context';
import { decodeGlobalId, encodeGlobalId } from './global-id';

export const builder = new SchemaBuilder<{
  Context: AppContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    ID: { Input: string; Output: string | number };
  };
  /** Counted only when a client asks for it. */
  Connection: { totalCount: () => Promise<number> };
}>({
  plugins: [RelayPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    encodeGlobalID: encodeGlobalId,
    decodeGlobalID: decodeGlobalId,
    nodeQueryOptions: {
      description: 'Fetches any object by its global ID; null when it does not exist.',
    },
    nodesQueryOptions: {
      description: 'Fetches objects by global IDs, in the given order; null entries for missing ones.',
    },
  },
});

builder.queryType({ description: 'The storefront: products, searches and orders.' });

builder.globalConnectionField('totalCount', (t) =>
  t.int({
    description: 'Number of items matching the query, across all pages.',
    resolve: (connection) => connection.totalCount(),
  }),
);
