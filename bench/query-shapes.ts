import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Document, Filter } from 'mongodb';
import { createOrderRepository } from '../src/db/orders/order-repository';
import { createProductRepository } from '../src/db/catalog/product-repository';
import { WITHOUT_SEARCH_FIELDS } from '../src/db/catalog/product-search';
import { connectDatabase } from '../src/db/mongo';
import { openBenchDatabase } from './database';
import { DATA_DIR } from './harness';
import { median } from './median';
import { descendants, totalCpuMs } from './proc';

/**
 * Issue 29: what each candidate query shape costs the database, per call, on the bench's own
 * database (10,000 products, 50,000 orders, seed 42; seeded as `npm run bench` does, if missing). Every
 * shape runs `--calls` times per round from `--parallel` callers, the shapes in a rotating order,
 * `--rounds` rounds; the table shows the median of the rounds of the database's CPU per call
 * (PostgreSQL's process tree and FerretDB, from /proc) and how many commands one call sent
 * (round trips, getMore and killCursors included). Usage:
 *
 *   node --import tsx bench/query-shapes.ts [--rounds 3 --calls 600 --parallel 4]
 */

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    calls: { type: 'string', default: '600' },
    parallel: { type: 'string', default: '4' },
    /** Only the shapes whose group starts with one of these (comma-separated). */
    only: { type: 'string' },
  },
});
const ROUNDS = Number(args.rounds);
const CALLS = Number(args.calls);
const PARALLEL = Number(args.parallel);
const ONLY = args.only?.split(',');
for (const [name, value] of Object.entries({ rounds: ROUNDS, calls: CALLS, parallel: PARALLEL }))
  if (!Number.isSafeInteger(value) || value < 1 || value > 100_000)
    throw new Error(`--${name} must be a whole number from 1 to 100000`);
const PER_PAGE = 15;
const MIDDLE_SKIP = 333 * PER_PAGE;
const log = (line: string) => process.stderr.write(`${line}\n`);
const load = () =>
  execFileSync('uptime', { encoding: 'utf8' })
    .trim()
    .replace(/^.*load/, 'load');

const bench = await openBenchDatabase({
  spec: { seed: 42, products: 10_000, orders: 50_000 },
  dbName: 'storefront_bench',
  dataDir: path.join(DATA_DIR, 'db'),
  log,
});
const watched = await connectDatabase({ uri: bench.uri, dbName: bench.dbName, monitorCommands: true });
let commands = 0;
watched.client.on('commandStarted', () => commands++);
const db = watched.db;
const products = db.collection('products');
const orders = db.collection('orders');
const productRepository = createProductRepository(db);
const orderRepository = createOrderRepository(db);

const order = (await orders.findOne({ id: 25_000 }))!;
const customer = order.customer_id as string;
const [newest] = await products
  .find({ updated_at: { $type: 'date' } }, { projection: { _id: 1, updated_at: 1 } })
  .sort({ updated_at: -1, _id: -1 })
  .limit(1)
  .toArray();
const at = newest!.updated_at as Date;
const until = () => new Date(Date.now() + 60_000);
/** The change feed's "anything past the watermark?" filter, as src/db/feed/poll.ts builds it. */
const pastMark = () =>
  ({
    $or: [{ updated_at: { $gt: at, $lte: until() } }, { updated_at: at, _id: { $nin: [newest!._id] } }],
  }) as Filter<Document>;
const pageStages = [{ $sort: { _id: 1 } }, { $limit: PER_PAGE }, { $project: WITHOUT_SEARCH_FIELDS }];
const middleStages = [
  { $sort: { _id: 1 } },
  { $skip: MIDDLE_SKIP },
  { $limit: PER_PAGE },
  { $project: WITHOUT_SEARCH_FIELDS },
];

const customerWalk = [
  { $sort: { _id: -1 } },
  { $limit: 2_000 },
  { $match: { customer_id: customer } },
  { $limit: 11 },
];

type Shape = [group: string, name: string, call: () => Promise<unknown>];
/** As the server sends every read (it made no difference to the database's CPU). */
const bounded = { maxTimeMS: 3_000 };
const firstPage = [{ $match: {} }, ...pageStages];
const pageFind = (hint?: string) =>
  products
    .find({}, { projection: WITHOUT_SEARCH_FIELDS, ...(hint ? { hint } : {}), ...bounded })
    .sort({ _id: 1 });

const shapes: Shape[] = [
  [
    'page 1',
    'aggregate $match {} $sort $limit $project, hint _id_ (before)',
    () => products.aggregate(firstPage, { hint: '_id_', ...bounded }).toArray(),
  ],
  ['page 1', 'the same, unhinted (chosen)', () => products.aggregate(firstPage, bounded).toArray()],
  ['page 1', 'find sort _id limit projection, hint _id_', () => pageFind('_id_').limit(PER_PAGE).toArray()],
  ['page 1', 'find sort _id limit projection, unhinted', () => pageFind().limit(PER_PAGE).toArray()],
  [
    'page 1',
    "find sort _id limit, no projection (RESTHeart's page)",
    () => products.find({}, bounded).sort({ _id: 1 }).limit(PER_PAGE).toArray(),
  ],
  [
    'page 1',
    "productRepository.findPage (the repository's own read, chosen)",
    () => productRepository.findPage({ words: [] }, 0, PER_PAGE),
  ],
  [
    'page 334',
    'aggregate $match {} $sort $skip $limit $project, hint _id_ (kept)',
    () => products.aggregate([{ $match: {} }, ...middleStages], { hint: '_id_', ...bounded }).toArray(),
  ],
  [
    'page 334',
    'find sort _id skip limit projection, hint _id_',
    () => pageFind('_id_').skip(MIDDLE_SKIP).limit(PER_PAGE).toArray(),
  ],
  [
    'total',
    'countDocuments {} ($match + $group; on a miss of the kept total)',
    () => products.countDocuments({}, bounded),
  ],
  [
    'total',
    "aggregate $count (RESTHeart's total)",
    () => products.aggregate([{ $count: 'n' }], bounded).toArray(),
  ],
  ['total', 'count command', () => db.command({ count: 'products', query: {}, ...bounded })],
  [
    'feed check',
    'find $or past the watermark, sort updated_at,_id, limit 1 (kept; now shared)',
    () =>
      products
        .find(pastMark(), { projection: { _id: 1 }, ...bounded })
        .sort({ updated_at: 1, _id: 1 })
        .limit(1)
        .toArray(),
  ],
  [
    'feed check',
    'the same, hint updated_at_1',
    () =>
      products
        .find(pastMark(), { projection: { _id: 1 }, hint: 'updated_at_1', ...bounded })
        .sort({ updated_at: 1, _id: 1 })
        .limit(1)
        .toArray(),
  ],
  [
    'feed check',
    'find updated_at $gte the watermark, limit ids_at + 1, hint updated_at_1',
    () =>
      products
        .find(
          { updated_at: { $gte: at, $lte: until() } },
          { projection: { _id: 1 }, hint: 'updated_at_1', ...bounded },
        )
        .limit(2)
        .toArray(),
  ],
  [
    'order',
    'findOne _id = ulid, projection {} (kept)',
    () => orders.findOne({ _id: order._id }, { projection: {}, ...bounded }),
  ],
  ['order', 'findOne _id = ulid, no projection option', () => orders.findOne({ _id: order._id }, bounded)],
  [
    'order',
    'find _id = ulid, limit 1, no singleBatch',
    () => orders.find({ _id: order._id }, bounded).limit(1).toArray(),
  ],
  [
    'customer window',
    'aggregate $sort _id -1 $limit 2,000 $match customer $limit 11, hint _id_ (before)',
    () => orders.aggregate(customerWalk, { hint: '_id_', batchSize: 11, ...bounded }).toArray(),
  ],
  [
    'customer window',
    'the same, unhinted (chosen)',
    () => orders.aggregate(customerWalk, { batchSize: 11, ...bounded }).toArray(),
  ],
  [
    'customer window',
    'find customer_id sort _id -1 limit 11, hint customer_id_1',
    () =>
      orders
        .find({ customer_id: customer }, { hint: 'customer_id_1', ...bounded })
        .sort({ _id: -1 })
        .limit(11)
        .batchSize(11)
        .toArray(),
  ],
  [
    'customer window',
    "orderRepository.findWindow (the repository's own read, chosen)",
    () => orderRepository.findWindow({ customerId: customer }, { limit: 11, oldestFirst: false }),
  ],
];

/** PostgreSQL's process tree and FerretDB's, apart. */
async function trees(): Promise<[number[], number[]]> {
  const [postgres = -1, ferretdb = -1] = bench.embedded?.pids ?? [];
  return [
    [postgres, ...(await descendants(postgres))],
    [ferretdb, ...(await descendants(ferretdb))],
  ];
}

interface Measured {
  postgresPerCall: number;
  ferretdbPerCall: number;
  commandsPerCall: number;
}

async function measure(call: () => Promise<unknown>): Promise<Measured> {
  await call();
  const [postgres, ferretdb] = await trees();
  const before = [totalCpuMs(postgres, true), totalCpuMs(ferretdb, true)];
  const sentBefore = commands;
  let left = CALLS;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (left-- > 0) await call();
    }),
  );
  return {
    postgresPerCall: (totalCpuMs(postgres, true) - before[0]!) / CALLS,
    ferretdbPerCall: (totalCpuMs(ferretdb, true) - before[1]!) / CALLS,
    commandsPerCall: (commands - sentBefore) / CALLS,
  };
}

const chosen = shapes.filter(([group]) => !ONLY || ONLY.some((prefix) => group.startsWith(prefix)));
const us = (ms: number) => Math.round(ms * 1000);

try {
  const started = load();
  const runs = chosen.map(() => [] as Measured[]);
  for (let round = 0; round < ROUNDS; round++) {
    log(`round ${round + 1}/${ROUNDS}`);
    // A rotating order: drift on a shared machine falls on every shape.
    for (let k = 0; k < chosen.length; k++) {
      const index = (k + round * 7) % chosen.length;
      runs[index]!.push(await measure(chosen[index]![2]));
    }
  }
  console.log(
    `\n${CALLS} calls × ${ROUNDS} rounds per shape, ${PARALLEL} callers; ${started} at the start, ${load()} at the end\n`,
  );
  console.log(
    '| what | shape | commands per call | DB CPU µs per call | of which PostgreSQL | of which FerretDB | min–max |',
  );
  console.log('| --- | --- | --: | --: | --: | --: | --: |');
  chosen.forEach(([group, name], index) => {
    const measured = runs[index]!;
    const totals = measured.map((run) => run.postgresPerCall + run.ferretdbPerCall);
    const cells = [
      group,
      name,
      median(measured.map((run) => run.commandsPerCall)).toFixed(2),
      us(median(totals)),
      us(median(measured.map((run) => run.postgresPerCall))),
      us(median(measured.map((run) => run.ferretdbPerCall))),
      `${us(Math.min(...totals))}–${us(Math.max(...totals))}`,
    ];
    console.log(`| ${cells.join(' | ')} |`);
  });
} finally {
  await watched.close();
  await bench.stop();
}
