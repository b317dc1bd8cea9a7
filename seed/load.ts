import type { Db, MongoServerError } from 'mongodb';
import { ensureIndexes } from '../src/db/mongo';
import { createOrderRepository } from '../src/db/orders/order-repository';
import { createProductRepository } from '../src/db/catalog/product-repository';
import { SEARCH_GRAMS_INDEX } from '../src/db/catalog/product-search';
import { dropStates } from '../src/db/derived/search-state';
import { dropProjection } from '../src/db/derived/search-projection';
import {
  markProjectionComplete,
  SEARCH_PROJECTION_COLLECTION,
} from '../src/db/catalog/search-projection-mark';
import { FIXTURE_ORDERS, FIXTURE_PRODUCTS } from './fixtures';
import { DEFAULT_BATCH_SIZE, generateOrders, generateProducts } from './generator';

export interface LoadCounts {
  products: number;
  orders: number;
}

/**
 * Empties both collections by dropping them and (unless the caller builds them after its load)
 * re-creating their indexes: dropping a table is instant where deleteMany({}) deletes (and later
 * vacuums) every row.
 */
export async function emptyCollections(db: Db, { withIndexes = true } = {}): Promise<void> {
  await db.collection('products').drop();
  await db.collection('orders').drop();
  // The products' before-images describe the catalogue dropped: the next server backfills them.
  await dropStates(db);
  await dropProjection(db, { withIndexes });
  if (withIndexes) await ensureIndexes(db);
}

/** Replaces the contents of both collections with the fixtures. */
export async function loadFixtures(db: Db): Promise<LoadCounts> {
  const products = createProductRepository(db);
  const orders = createOrderRepository(db);
  await emptyCollections(db);
  // The repositories insert keyed copies (src/db/documents.ts): the exported fixtures stay as they are.
  await products.insertMany(FIXTURE_PRODUCTS);
  await orders.insertMany(FIXTURE_ORDERS);
  await markProjectionComplete(db);
  return { products: FIXTURE_PRODUCTS.length, orders: FIXTURE_ORDERS.length };
}

async function isEmpty(db: Db, collection: string): Promise<boolean> {
  return (await db.collection(collection).findOne({}, { projection: { _id: 1 } })) === null;
}

function isDuplicateKey(error: unknown): boolean {
  const code = (error as MongoServerError | undefined)?.code;
  return code === 11000 || /E11000|duplicate key/i.test(String((error as Error | undefined)?.message));
}

/**
 * Loads the fixtures when both collections are empty; otherwise leaves the data alone.
 * Returns whether it loaded. Call it after ensureIndexes: when two processes race on an empty
 * database, the unique indexes let one of them win and the other reports `false`.
 */
export async function seedFixturesIfEmpty(db: Db): Promise<boolean> {
  if (!(await isEmpty(db, 'products')) || !(await isEmpty(db, 'orders'))) return false;
  // Before-images of a catalogue emptied by hand would describe products no longer there.
  await dropStates(db);
  await dropProjection(db);
  try {
    await createProductRepository(db).insertMany(FIXTURE_PRODUCTS);
    await createOrderRepository(db).insertMany(FIXTURE_ORDERS);
    await markProjectionComplete(db);
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
  return true;
}

export interface LoadProgress {
  phase: 'products' | 'orders';
  /** Documents of this phase inserted so far. */
  done: number;
  total: number;
  /** Documents of both phases inserted so far, out of `products + orders`. */
  overallDone: number;
  overallTotal: number;
}

export interface LoadGeneratedOptions {
  seed: number;
  products: number;
  orders: number;
  /**
   * Default (false): empty both collections and load the generated data alone, ids from 1.
   * True: load the fixtures first and add the generated data after them, with ids above the
   * fixtures' (orders then refer to the generated products only).
   */
  withFixtures?: boolean;
  /** Documents per insertMany (at most 5000; default 2000). */
  batchSize?: number;
  /** Size of the generated customer pool (default 1000). */
  customers?: number;
  onProgress?: (progress: LoadProgress) => void;
}

export interface LoadGeneratedResult extends LoadCounts {
  /** Fixture documents loaded before the generated ones (withFixtures). */
  fixtures: LoadCounts;
  /** Time spent generating, inserting and indexing (emptying the collections or loading fixtures excluded). */
  elapsedMs: number;
  /** Generated documents (products + orders) generated and inserted per second. */
  docsPerSecond: number;
}

/** Inserts in flight at once: generation of the next batch overlaps the database's work. */
const INSERTS_IN_FLIGHT = 2;

async function insertBatches<T>(
  batches: Iterable<T[]>,
  insert: (docs: T[]) => Promise<void>,
  onInserted: (count: number) => void,
): Promise<number> {
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let inserted = 0;
  for (const batch of batches) {
    if (failure !== undefined) break;
    // A throwing onInserted fails the load like a failed insert: only once every insert in flight
    // has settled, so none lands after the caller has moved on (a test's next load met one).
    const task: Promise<void> = insert(batch)
      .then(() => {
        inserted += batch.length;
        onInserted(batch.length);
      })
      .catch((error: unknown) => {
        failure ??= error;
      });
    const tracked = task.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= INSERTS_IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure;
  return inserted;
}

function maxId(docs: readonly { id: number }[]): number {
  return docs.reduce((max, doc) => Math.max(max, doc.id), 0);
}

/** Generates `products` and `orders` from `seed` and inserts them in batches. */
export async function loadGenerated(db: Db, options: LoadGeneratedOptions): Promise<LoadGeneratedResult> {
  const { seed, withFixtures = false, batchSize = DEFAULT_BATCH_SIZE, onProgress } = options;
  const productRepository = createProductRepository(db);
  const orderRepository = createOrderRepository(db);
  let fixtures: LoadCounts = { products: 0, orders: 0 };
  let productStart = 1;
  let orderStart = 1;
  let itemStart = 1;
  if (withFixtures) {
    fixtures = await loadFixtures(db);
    productStart = maxId(FIXTURE_PRODUCTS) + 1;
    orderStart = maxId(FIXTURE_ORDERS) + 1;
    itemStart = maxId(FIXTURE_ORDERS.flatMap((order) => order.items)) + 1;
    // Each product adds ~35 keys to the gram index: built once after the load instead of per
    // insert (6-7× faster at 20,000; docs/benchmarks.md, "Search").
    await db.collection(SEARCH_PROJECTION_COLLECTION).dropIndex(SEARCH_GRAMS_INDEX.name);
  } else {
    // Secondary indexes are built once after the load, not maintained insert by insert; the
    // primary key (_id) still refuses duplicates as they arrive.
    await emptyCollections(db, { withIndexes: false });
  }

  const started = performance.now();
  let products = 0;
  let orders = 0;
  let loaded = false;
  try {
    const overallTotal = options.products + options.orders;
    let overallDone = 0;
    let productsDone = 0;
    products = await insertBatches(
      generateProducts({ seed, count: options.products, startId: productStart, batchSize }),
      (docs) => productRepository.insertMany(docs),
      (count) => {
        productsDone += count;
        overallDone += count;
        onProgress?.({
          phase: 'products',
          done: productsDone,
          total: options.products,
          overallDone,
          overallTotal,
        });
      },
    );

    let ordersDone = 0;
    orders = await insertBatches(
      generateOrders({
        seed,
        count: options.orders,
        startId: orderStart,
        startItemId: itemStart,
        // Items are taken from the products just generated (1000 would-be products when there are none).
        products: { startId: productStart, count: options.products > 0 ? options.products : 1000 },
        customers: options.customers,
        batchSize,
      }),
      (docs) => orderRepository.insertMany(docs),
      (count) => {
        ordersDone += count;
        overallDone += count;
        onProgress?.({ phase: 'orders', done: ordersDone, total: options.orders, overallDone, overallTotal });
      },
    );
    await markProjectionComplete(db);
    loaded = true;
  } finally {
    // The indexes dropped for the load come back whatever happened to it (a full disk: ENOSPC):
    // a missing gram index once made deep search pages a 500 until the server restarted. If the
    // load failed, its error is the one reported; the server ensures the indexes at start too.
    await ensureIndexes(db).catch((error: unknown) => {
      if (loaded) throw error;
    });
  }
  const elapsedMs = performance.now() - started;
  return {
    products,
    orders,
    fixtures,
    elapsedMs,
    docsPerSecond: elapsedMs > 0 ? ((products + orders) * 1000) / elapsedMs : 0,
  };
}
