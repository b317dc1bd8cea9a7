import Fastify from 'fastify';
import mercurius from 'mercurius';
import { schema } from '../../src/schema/index';
import { announce, setUpPeer } from './shared';

/**
 * Peer: Mercurius on Fastify over our Pothos schema object and our context. `--jit` (or
 * MERCURIUS_JIT=1) compiles each operation with graphql-jit after its first execution.
 */

const jit = process.argv.includes('--jit') || process.env.MERCURIUS_JIT === '1';
const { env, contextFor } = await setUpPeer();
const app = Fastify({ logger: false });
await app.register(mercurius, {
  schema,
  path: '/graphql',
  graphiql: false,
  jit: jit ? 1 : 0,
  context: (request) => contextFor(request.headers.authorization),
});
await app.listen({ port: env.port, host: env.host });
announce(jit ? 'mercurius-jit' : 'mercurius', `http://${env.host}:${env.port}/graphql`);
