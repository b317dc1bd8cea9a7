import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Db, Document } from 'mongodb';
import { FOREIGN_BUDGET, FOREIGN_RECHECK_MS, findForeignKeys } from '../src/db/foreign-keys';
import { createOrderRepository } from '../src/db/orders/order-repository';
import { createProductRepository } from '../src/db/catalog/product-repository';
import { openBenchDatabase } from './database';
import { median } from './median';

/**
 * Issue 26: what reading documents another writer keyed its own way (the driver's default
 * ObjectId `_id`) costs, beside the gateway's own (`_id` = id / ulid), in one run. The data layer
 * is timed directly (the repositories the server uses), so HTTP and GraphQL costs stay out.
 *
 *   npm run bench:foreign-keys [-- --products 100000 --orders 100000 --rounds 7]
 *
 * Products and orders are re-keyed in steps (deleted and inserted again without `_id`, as a
 * Laravel app would write them): 0, 100, FOREIGN_BUDGET, then more than the budget.
 */

const { values } = parseArgs({
  options: {
    products: { type: 'string', default: '100000' },
    orders: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '7' },
    calls: { type: 'string', default: '20' },
  },
});
const spec = { seed: 42, products: Number(values.products), orders: Number(values.orders) };
const rounds = Number(values.rounds);
const calls = Number(values.calls);
const log = (line: string) => console.error(line);

const bench = await openBenchDatabase({
  spec,
  // Its own database: other benchmarks never see the re-keyed documents.
  dbName: `foreign_keys_${spec.products}`,
  dataDir: path.join(import.meta.dirname, '.data'),
  log,
});
const db: Db = bench.database.db;

/** Median over `rounds` of the mean ms per call of `calls` sequential calls. */
async function timed(run: () => Promise<unknown>): Promise<number> {
  await run();
  const perCall: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    for (let call = 0; call < calls; call++) await run();
    perCall.push((performance.now() - started) / calls);
  }
  return median(perCall);
}

/** Re-keys the `count` documents with the lowest field values that still have the gateway's key. */
async function rekey(collection: 'products' | 'orders', count: number): Promise<void> {
  if (count <= 0) return;
  const own = collection === 'products' ? { _id: { $type: 'number' } } : { _id: { $type: 'string' } };
  const docs = await db
    .collection(collection)
    .find(own as Document)
    .sort({ _id: 1 })
    .limit(count)
    .toArray();
  if (docs.length === 0) return;
  await db.collection(collection).deleteMany({ _id: { $in: docs.map((doc) => doc._id) } } as Document);
  await db.collection(collection).insertMany(docs.map(({ _id, ...rest }) => rest));
}

const products = createProductRepository(db);
const orders = createOrderRepository(db);
const ownProduct = Math.floor(spec.products / 2);
const ownOrder = (await db.collection('orders').find({}).sort({ _id: -1 }).skip(50).limit(1).next())!
  .ulid as string;

const rows: string[] = [];
const row = (...cells: (string | number)[]) => rows.push(`| ${cells.join(' | ')} |`);
row(
  'other writers’ documents',
  'probe (both ends)',
  'product by id',
  'order by ulid',
  'REST page 1',
  'keyset window, middle',
  'last window',
  'viewer-like order list',
);
row('--:', '--:', '--:', '--:', '--:', '--:', '--:', '--:');

let rekeyed = 0;
for (const target of [0, 100, FOREIGN_BUDGET, FOREIGN_BUDGET + 500]) {
  await rekey('products', target - rekeyed);
  await rekey('orders', target - rekeyed);
  rekeyed = target;
  // The lowest ids and oldest ULIDs were re-keyed: look up the first of them, the others' own.
  const foreignProduct = target > 0 ? 1 : ownProduct;
  const foreignOrder =
    target > 0
      ? ((await db.collection('orders').findOne({ _id: { $type: 'objectId' } } as Document))!.ulid as string)
      : ownOrder;
  await new Promise((resolve) => setTimeout(resolve, FOREIGN_RECHECK_MS + 100));
  const probe = await timed(() =>
    findForeignKeys(db.collection('products'), {
      field: 'id',
      isOwnKey: (key) => typeof key === 'number',
      valueOf: (raw) => (typeof raw === 'number' ? raw : undefined),
    }),
  );
  const byId = await timed(() => products.findByIds([foreignProduct]));
  const byUlid = await timed(() => orders.findByUlid(foreignOrder));
  const page = await timed(() => products.findPage({ words: [] }, 0, 15));
  const middle = await timed(() =>
    products.findWindow({ words: [] }, { afterId: ownProduct, limit: 16, descending: false }),
  );
  const last = await timed(() => products.findWindow({ words: [] }, { limit: 16, descending: true }));
  const list = await timed(() => orders.findWindow({}, { limit: 11, oldestFirst: false }));
  const fmt = (ms: number) => ms.toFixed(2);
  row(
    target === 0
      ? '0 (all `_id` = id / ulid)'
      : `${target}${target > FOREIGN_BUDGET ? ' (over the budget)' : ''}`,
    fmt(probe),
    fmt(byId),
    fmt(byUlid),
    fmt(page),
    fmt(middle),
    fmt(last),
    fmt(list),
  );
  log(rows.at(-1)!);
}

// Back to the gateway's keys, so the next run reuses the data.
for (const [collection, field] of [
  ['products', 'id'],
  ['orders', 'ulid'],
] as const) {
  const docs = await db
    .collection(collection)
    .find({ _id: { $type: 'objectId' } } as Document)
    .toArray();
  if (docs.length === 0) continue;
  await db.collection(collection).deleteMany({ _id: { $in: docs.map((doc) => doc._id) } } as Document);
  await db.collection(collection).insertMany(docs.map((doc) => ({ ...doc, _id: doc[field] })));
}
await bench.stop();
console.log(
  `\n${spec.products} products, ${spec.orders} orders (${bench.kind}); ms per call, median of ${rounds} rounds of ${calls} calls; ` +
    `load ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')} at the end\n`,
);
console.log(rows.join('\n'));
