import { MongoClient } from 'mongodb';
import { ConfigError, loadConfig } from '../src/config';
import { readCommandLine, usageError } from './command-line';
import { openToolDatabase, type ToolDatabase } from './tool-database';

const usage = `Usage: npm run simulate [-- --every 2s] [--orders N] [--ulid ULID …]

Development only: moves orders through their states the way the shop's back office would,
pending → processing → partially_fulfilled → completed (every fifth order: refunded), one step
per order every --every, so live subscriptions have something to show. Each step is what
another application writes: $set of fulfillment_status, payment_status and updated_at, through
the plain driver. Prints each step; exits when every order has reached its end.

  --every D     time between steps: 500ms, 2s, 1m (default 2s)
  --orders N    the N newest orders (default 3); ignored with --ulid
  --ulid ULID   this order (repeatable)

The database is MONGODB_URI / MONGODB_DB. Without MONGODB_URI: the embedded database of the
npm start (or npm run db) running on DATA_DIR, else the one in DATA_DIR/db, started for this run.`;

const STEPS = [
  { fulfillment_status: 'pending', payment_status: 'pending' },
  { fulfillment_status: 'processing', payment_status: 'completed' },
  { fulfillment_status: 'partially_fulfilled', payment_status: 'completed' },
] as const;
const COMPLETED = { fulfillment_status: 'completed', payment_status: 'completed' } as const;
const REFUNDED = { fulfillment_status: 'refunded', payment_status: 'completed' } as const;
const MAX_ORDERS = 1_000;

const { values } = readCommandLine(usage, {
  every: { type: 'string', default: '2s' },
  orders: { type: 'string', default: '3' },
  ulid: { type: 'string', multiple: true },
});

function durationMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text.trim());
  if (!match) return usageError(`--every must be like 500ms, 2s or 1m, got "${text}"`, usage);
  const ms = Number(match[1]) * { ms: 1, s: 1_000, m: 60_000 }[match[2] as 'ms' | 's' | 'm'];
  if (ms < 100 || ms > 3_600_000) return usageError('--every must be between 100ms and 60m', usage);
  return ms;
}

const everyMs = durationMs(values.every);
const count = Number(values.orders);
if (!Number.isInteger(count) || count < 1 || count > MAX_ORDERS)
  usageError(`--orders must be 1-${MAX_ORDERS}, got "${values.orders}"`, usage);

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  usageError(error.message, usage);
}
if (config.env === 'production')
  usageError('npm run simulate changes orders: never with NODE_ENV=production.', usage);

let database: ToolDatabase;
try {
  database = await openToolDatabase(config);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

const client = await MongoClient.connect(database.uri);
const stop = async () => {
  await client.close();
  await database.release();
};
process.once('SIGINT', () => void stop().then(() => process.exit(130)));
try {
  const orders = client.db(config.mongo.dbName).collection('orders');
  const chosen = values.ulid
    ? await orders.find({ ulid: { $in: values.ulid.map((ulid) => ulid.toUpperCase()) } }).toArray()
    : await orders.find({}).sort({ ulid: -1 }).limit(count).toArray();
  if (chosen.length === 0) {
    console.error('No such orders: load some with npm run seed (or npm start on an empty database).');
    process.exitCode = 1;
  }
  const paths = chosen.map((order, index) => ({
    ulid: String(order.ulid),
    customer: String(order.customer_id),
    states: [...STEPS, (index + 1) % 5 === 0 ? REFUNDED : COMPLETED],
  }));
  console.log(`Moving ${paths.length} order(s), one step every ${values.every}:`);
  for (const { ulid, customer } of paths) console.log(`  ${ulid} of ${customer}`);
  for (let step = 0; paths.some(({ states }) => step < states.length); step++) {
    for (const { ulid, states } of paths) {
      const state = states[step];
      if (!state) continue;
      await orders.updateOne({ ulid }, { $set: { ...state, updated_at: new Date() } });
      console.log(
        `${new Date().toISOString()}  ${ulid}  ${state.fulfillment_status} (payment ${state.payment_status})`,
      );
    }
    if (step < 3) await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
} finally {
  await stop();
}
