import { createServer } from 'node:http';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { createYoga } from 'graphql-yoga';
import { schema } from '../../src/schema/index';
import { announce, setUpPeer } from './shared';

/**
 * Peer: the fixed stack with none of our guards — `createYoga` + graphql-jit on node:http over
 * our Pothos schema object and our context, at Yoga's cheapest: no logging, CORS or landing
 * page, and no body limit of its own (as `ours`, whose node:http front counts bodies). What `ours`
 * costs above it is our plugins'; what it costs above Mercurius + jit is Yoga's (issue 29's floor).
 */

const { env, contextFor } = await setUpPeer();
const yoga = createYoga({
  schema,
  graphqlEndpoint: '/graphql',
  graphiql: false,
  landingPage: false,
  logging: false,
  cors: false,
  maxRequestBodySize: false,
  context: ({ request }) => contextFor(request.headers.get('authorization')),
  plugins: [useGraphQlJit()],
});
createServer(yoga).listen(env.port, env.host, () =>
  announce('yoga-jit', `http://${env.host}:${env.port}/graphql`),
);
