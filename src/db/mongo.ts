import {
  MongoClient,
  MongoClientClosedError,
  MongoExpiredSessionError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  type Db,
  type IndexDescription,
} from 'mongodb';
import { linkOpenSets } from './client-open-sets';
import { DatabaseBusyError } from './guards/admission';
import { watchHeartbeats } from './guards/heartbeat-watchdog';
import { DatabaseTimeoutError, RequestAbandonedError } from './guards/deadline';
import { SEARCH_GRAMS_INDEX, SEARCH_GRAMS_VERSION_INDEX } from './catalog/product-search';

export const UPDATED_AT_INDEX = { key: { updated_at: 1 }, name: 'updated_at_1' } as const;

export interface MongoSettings {
  uri: string;
  dbName: string;
  /** How long an operation waits for a reachable server before failing (and the API answers 503). */
  serverSelectionTimeoutMS?: number;
  /**
   * How long a connection may wait for a reply before it is given up (socketTimeoutMS; 0: no
   * limit, as the seed CLI's index builds need); default 30 s. The server passes
   * MONGODB_TIMEOUT_MS + 1 s, so a hung database frees its connections soon after
   * src/db/guards/deadline.ts has answered the request.
   */
  socketTimeoutMS?: number;
  maxPoolSize?: number;
  readPreference?: 'primary' | 'primaryPreferred' | 'secondary' | 'secondaryPreferred' | 'nearest';
  /** Emit the driver's command events (tests count round trips with them). Costly: off by default. */
  monitorCommands?: boolean;
  /** Where the heartbeat watchdog (src/db/guards/heartbeat-watchdog.ts) says what it did. */
  log?: (message: string, details: Record<string, unknown>) => void;
}

export interface Database {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

export async function connectDatabase(settings: MongoSettings): Promise<Database> {
  const connectTimeoutMS = settings.serverSelectionTimeoutMS ?? 3_000;
  const client = new MongoClient(settings.uri, {
    serverSelectionTimeoutMS: settings.serverSelectionTimeoutMS ?? 3_000,
    connectTimeoutMS,
    // A query on a connection that hangs mid-outage fails instead of hanging the connection.
    socketTimeoutMS: settings.socketTimeoutMS ?? 30_000,
    maxPoolSize: settings.maxPoolSize ?? 20,
    readPreference: settings.readPreference ?? 'primary',
    appName: 'storefront-gateway',
    monitorCommands: settings.monitorCommands ?? false,
  });
  linkOpenSets(client);
  await client.connect();
  // A heartbeat ends within connectTimeoutMS (a new connection's handshake, or a hello's reply).
  const stopWatching = watchHeartbeats(client, {
    stuckAfterMs: 2 * connectTimeoutMS + 1_000,
    log: settings.log,
  });
  const db = client.db(settings.dbName);
  return {
    client,
    db,
    close: () => {
      stopWatching();
      return client.close();
    },
  };
}

/** Every collection's own index: on `_id`, a product's id or an order's ULID (src/db/documents.ts). */
export const PRIMARY_KEY = '_id_';

/**
 * The fields the gateway copies into `_id`, indexed for documents another writer keyed its own way
 * (src/db/foreign-keys.ts): their lookups, and lists when most of a collection is keyed so. Not
 * unique: a constraint would refuse other applications' writes, or fail at start on their data.
 */
export const ID_FIELD_INDEX = 'id_1';
export const ULID_FIELD_INDEX = 'ulid_1';

/**
 * Every read we serve, and the index that serves it (docs/benchmarks.md). Products are keyed by
 * `_id` = id and orders by `_id` = ulid: lookups, keyset bounds and every page order use the
 * primary key, the only order DocumentDB reads from an index. The others serve equality filters
 * (bitmap scans); they do not end in `_id`, or the planner combines their `_id` part with the
 * primary key's range and sorts instead of walking the key in order.
 */
export const INDEXES: Record<'products' | 'orders' | 'product_search', IndexDescription[]> = {
  products: [
    { key: { category_key: 1 }, name: 'category_key_1' },
    { key: { id: 1 }, name: ID_FIELD_INDEX },
    { key: { 'variant.id': 1 }, name: 'variant.id_1', unique: true },
    // The change feed's poll and the search's products written since it (src/db/change-feed.ts).
    UPDATED_AT_INDEX,
  ],
  orders: [
    { key: { id: 1 }, name: 'id_1', unique: true },
    { key: { ulid: 1 }, name: ULID_FIELD_INDEX },
    { key: { 'items.id': 1 }, name: 'items.id_1' },
    // Order lists by customer or state (src/db/orders/order-repository.ts, findWindow).
    { key: { customer_id: 1 }, name: 'customer_id_1' },
    { key: { payment_status: 1 }, name: 'payment_status_1' },
    { key: { fulfillment_status: 1 }, name: 'fulfillment_status_1' },
    // The orders change feed's poll (src/db/change-feed.ts), which the live subscriptions follow.
    { key: { updated_at: 1 }, name: 'updated_at_1' },
  ],
  // The gateway's own copy of what a search reads (src/db/derived/search-projection.ts).
  product_search: [
    SEARCH_GRAMS_INDEX,
    SEARCH_GRAMS_VERSION_INDEX,
    { key: { category_key: 1 }, name: 'category_key_1' },
  ],
};

/**
 * Indexes earlier versions made on other systems' collections, for the grams they wrote there
 * (now in the gateway's own `product_search`): each cost every write of the owner ~35 index keys.
 */
const RETIRED_INDEXES: Partial<Record<keyof typeof INDEXES, string[]>> = {
  products: [SEARCH_GRAMS_INDEX.name, SEARCH_GRAMS_VERSION_INDEX.name],
};

/** Creates the missing indexes, drops retired ones, and names those it created (the seed script prints them). */
export async function ensureIndexes(db: Db): Promise<string[]> {
  const created: string[] = [];
  for (const [collectionName, wanted] of Object.entries(INDEXES)) {
    const collection = db.collection(collectionName);
    const existing = new Set(
      (
        await collection
          .listIndexes()
          .toArray()
          .catch(() => [])
      ).map((index) => index.name as string),
    );
    for (const retired of RETIRED_INDEXES[collectionName as keyof typeof INDEXES] ?? [])
      if (existing.has(retired)) await collection.dropIndex(retired);
    const missing = wanted.filter((index) => !existing.has(index.name as string));
    if (missing.length > 0) {
      await collection.createIndexes(missing);
      created.push(...missing.map((index) => `${collectionName}.${index.name}`));
    }
  }
  return created;
}

/**
 * Server error codes that mean "not now" rather than "wrong": a deadline the server enforced
 * (maxTimeMS: MaxTimeMSExpired 50, ExceededTimeLimit 262, NetworkInterfaceExceededTimeLimit 202,
 * NetworkTimeout 89) or a server going away or stepping down (ShutdownInProgress 91,
 * InterruptedAtShutdown 11600, InterruptedDueToReplStateChange 11602, PrimarySteppedDown 189,
 * NotWritablePrimary 10107, NotPrimaryNoSecondaryOk 13435, NotPrimaryOrSecondary 13436).
 */
const UNAVAILABLE_SERVER_CODES = new Set([50, 89, 91, 189, 202, 262, 10107, 11600, 11602, 13435, 13436]);

/**
 * FerretDB answers InternalError (1) with these messages when it has lost its PostgreSQL backend
 * (killed, restarting or shutting down): measured after a kill -9 of the postmaster, thousands of
 * requests a second got them until the supervisor had restarted it. Any other InternalError stays
 * a 500: a fault to look at.
 */
const LOST_BACKEND =
  /failed to connect|dial error|broken pipe|connection reset|terminating connection|the database system is|server closed the connection|unexpected EOF|conn closed/i;

function isLostBackend(error: MongoServerError): boolean {
  return Number(error.code) === 1 && LOST_BACKEND.test(error.message);
}

/**
 * A socket failure the driver lets through unwrapped: writing to a connection FerretDB had just
 * closed raised Node's own EPIPE ("This socket has been ended by the other party").
 */
const SOCKET_ERROR_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT']);

function isSocketError(error: unknown): boolean {
  return error instanceof Error && SOCKET_ERROR_CODES.has(String((error as NodeJS.ErrnoException).code));
}

/**
 * Errors that mean "the database cannot be reached right now" (answered 503, retried by clients):
 * unreachable, hung past MONGODB_TIMEOUT_MS (network timeouts are MongoNetworkErrors), the
 * client closed under a request at the end of a shutdown, or no turn free in the admission lane.
 * An abandoned request's calls fail too: answered the same (to nobody), never logged as a bug.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    error instanceof MongoServerSelectionError ||
    error instanceof DatabaseTimeoutError ||
    error instanceof DatabaseBusyError ||
    error instanceof RequestAbandonedError ||
    error instanceof MongoOperationTimeoutError ||
    (error instanceof MongoServerError &&
      (UNAVAILABLE_SERVER_CODES.has(Number(error.code)) || isLostBackend(error))) ||
    error instanceof MongoClientClosedError ||
    // An operation running while the heartbeat watchdog connects the client again.
    error instanceof MongoExpiredSessionError ||
    error instanceof MongoNetworkError ||
    isSocketError(error) ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError
  );
}

export async function pingDatabase(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}
