import { createViewerResolver } from '../../src/auth/tokens';
import { createContext, type AppContext, type ContextDependencies } from '../../src/context';
import { connectDatabase, type Database } from '../../src/db/mongo';
import { createOrderRepository } from '../../src/db/orders/order-repository';
import { createProductRepository } from '../../src/db/catalog/product-repository';

/**
 * What every peer server shares with ours: the same database client settings (src/db/mongo.ts
 * connectDatabase), the same repositories, the same JWT verification and the same per-request
 * context (src/context.ts). Only the HTTP/GraphQL framework differs.
 *
 * Settings come from the environment the bench orchestrator (bench/run.ts) passes to each child.
 */

export interface PeerEnvironment {
  host: string;
  port: number;
  mongoUri: string;
  dbName: string;
  jwtSecret: string;
  storeLocale: string;
  publicBaseUrl: string;
  maxPoolSize: number;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is required (bench children are started by bench/run.ts)`);
    process.exit(2);
  }
  return value;
}

export function peerEnvironment(): PeerEnvironment {
  return {
    host: process.env.HOST ?? '127.0.0.1',
    port: Number(required('PORT')),
    mongoUri: required('MONGODB_URI'),
    dbName: required('MONGODB_DB'),
    jwtSecret: required('JWT_SECRET'),
    storeLocale: process.env.STORE_LOCALE ?? 'en-US',
    publicBaseUrl: process.env.PUBLIC_BASE_URL ?? 'http://127.0.0.1:4000',
    maxPoolSize: Number(process.env.MONGODB_MAX_POOL_SIZE ?? 20),
  };
}

export interface PeerSetup {
  env: PeerEnvironment;
  database: Database;
  deps: ContextDependencies;
  /** Our context for one request; only the Authorization header is read from the request. */
  contextFor(authorization: string | null | undefined): AppContext;
}

/**
 * createContext reads nothing but `request.headers.get('authorization')`. Building a real Fetch
 * Request per call would charge the peers for an object they never need, so they get this shim.
 */
function headerOnlyRequest(authorization: string | null | undefined): Request {
  const value = authorization ?? null;
  return {
    headers: { get: (name: string) => (name.toLowerCase() === 'authorization' ? value : null) },
  } as never;
}

/** Connects like our server does (src/db/mongo.ts) and stops the process when the bench goes away. */
export async function setUpPeer(): Promise<PeerSetup> {
  const env = peerEnvironment();
  const database = await connectDatabase({
    uri: env.mongoUri,
    dbName: env.dbName,
    maxPoolSize: env.maxPoolSize,
  });
  const products = createProductRepository(database.db);
  const orders = createOrderRepository(database.db);
  const deps: ContextDependencies = {
    products: () => products,
    orders: () => orders,
    resolveViewer: createViewerResolver({ algorithms: ['HS256'], secret: env.jwtSecret }),
    storeLocale: env.storeLocale,
  };
  exitWithParent(() => database.close());
  return {
    env,
    database,
    deps,
    contextFor: (authorization) => createContext(headerOnlyRequest(authorization), deps),
  };
}

/** Exits on SIGTERM/SIGINT, and when the orchestrator's stdin pipe closes (it died or finished). */
export function exitWithParent(cleanup: () => Promise<unknown>): void {
  let exiting = false;
  const exit = () => {
    if (exiting) return;
    exiting = true;
    const timer = setTimeout(() => process.exit(0), 2_000);
    timer.unref();
    cleanup()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
  process.stdin.on('end', exit);
  process.stdin.on('error', exit);
  process.stdin.resume();
}

export function announce(name: string, url: string): void {
  console.log(`${name} listening on ${url}`);
}
