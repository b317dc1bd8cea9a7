import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import type { AppContext } from '../context';
import { badUserInput } from '../errors';
import { decodeGlobalId, encodeGlobalId } from './global-id';

/** IDs per `nodes` call: 5,500 IDs in a 94 kB request made a 3.3 MB response. */
export const MAX_NODE_IDS = 100;

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
      description: `Fetches objects by global IDs (at most ${MAX_NODE_IDS}), in the given order; null entries for missing ones.`,
      resolve: (_root, args, _context, _info, resolveNodes) => {
        if (args.ids.length > MAX_NODE_IDS) {
          throw badUserInput({ ids: [`The ids field must not have more than ${MAX_NODE_IDS} items.`] });
        }
        return resolveNodes(args.ids);
      },
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
