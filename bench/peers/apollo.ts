import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import type { AppContext } from '../../src/context';
import { schema } from '../../src/schema/index';
import { announce, setUpPeer } from './shared';

/** Peer: Apollo Server 5 (standalone, node:http) over our Pothos schema object and our context. */

const { env, contextFor } = await setUpPeer();
const server = new ApolloServer<AppContext>({
  schema,
  plugins: [ApolloServerPluginLandingPageDisabled()],
});
const { url } = await startStandaloneServer(server, {
  listen: { port: env.port, host: env.host },
  context: async ({ req }) => contextFor(req.headers.authorization),
});
announce('apollo', url);
