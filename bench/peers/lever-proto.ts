import { loadConfig } from '../../src/config';
import { connectDatabase } from '../../src/db/mongo';
import { serveLeverPrototype } from '../lever-prototype';
import { announce, exitWithParent, peerEnvironment } from './shared';

/**
 * Issue 29's lever as a bench server (`--servers lever-proto`): bench/lever-prototype.ts on the
 * bench's database, with ours' production settings and its rate limits at the same ceiling.
 * POST /graphql with a JSON body only, so the GraphQL scenarios only; no change feed (its page
 * totals are counted every time, `categories` too).
 */

const env = peerEnvironment();
const database = await connectDatabase({
  uri: env.mongoUri,
  dbName: env.dbName,
  maxPoolSize: env.maxPoolSize,
});
exitWithParent(() => database.close());
const config = loadConfig({
  NODE_ENV: 'production',
  MONGODB_URI: env.mongoUri,
  MONGODB_DB: env.dbName,
  JWT_SECRET: env.jwtSecret,
  PUBLIC_BASE_URL: env.publicBaseUrl,
  LOG_LEVEL: 'warn',
  RATE_LIMIT_REQUESTS_PER_MINUTE: '100000000',
  RATE_LIMIT_COST_PER_MINUTE: '1000000000000',
});
serveLeverPrototype(config, env.port, env.host, database.db);
announce('lever-proto', `http://${env.host}:${env.port}/graphql`);
