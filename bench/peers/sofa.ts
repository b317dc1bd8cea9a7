import { createServer } from 'node:http';
import { useSofa } from 'sofa-api';
import { schema } from '../../src/schema/index';
import { announce, setUpPeer } from './shared';

/**
 * Peer for REST: SOFA generates REST routes from our Pothos schema object and runs them with our
 * context. `productPage` becomes `GET /api/product-page?page=&perPage=&search=`. SOFA treats
 * objects with an `id` as models and would return only their ids; `ignore` makes it select the
 * products and their variants in full, like /api/v1.
 */

const { env, contextFor } = await setUpPeer();
const sofa = useSofa({
  schema,
  basePath: '/api',
  ignore: ['ProductPage.items', 'Product.variant'],
  context: ({ request }) => contextFor(request.headers.get('authorization')),
});
const server = createServer(sofa);
server.listen(env.port, env.host, () => announce('sofa', `http://${env.host}:${env.port}/api/product-page`));
