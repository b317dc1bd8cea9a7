import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { ConfigError, loadConfig } from '../src/config';
import { connectDatabase, ensureIndexes, type Database } from '../src/db/mongo';
import { DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE } from '../seed/generator';
import { loadFixtures, loadGenerated, type LoadProgress } from '../seed/load';
import { FIXTURES_REPLACED, listenUrl, sampleCustomers, tryItLines } from '../seed/summary';
import { openToolDatabase, type ToolDatabase } from './tool-database';

const USAGE = `Usage: npm run seed -- [--fixtures] [--products N] [--orders M] [--seed S] [--batch-size B]

Replaces the products and orders of the configured database with seed data.

  --fixtures        Load the hand-written fixtures (customers cus_alice and cus_bob).
                    This is what happens when no option is given.
  --products N      Generate N products (ids from 1).
  --orders M        Generate M orders of the generated products (ids from 1).
  --seed S          Seed of the generator, a non-negative integer (default 1).
                    The same seed and counts always give the same data.
  --batch-size B    Documents per insert, 1-${MAX_BATCH_SIZE} (default ${DEFAULT_BATCH_SIZE}).
  -h, --help        Show this help.

With --fixtures and --products/--orders together, the fixtures are loaded first and the
generated documents follow with ids above the fixtures'. Giving only one of --products and
--orders empties the other collection.

The database is MONGODB_URI / MONGODB_DB. Without MONGODB_URI: the embedded database of the
npm start (or npm run db) running on DATA_DIR, else the one in DATA_DIR/db, started for this run.

Exit codes: 0 done, 1 failed, 2 invalid arguments or configuration.`;

class UsageError extends Error {}

interface SeedArgs {
  fixtures: boolean;
  products: number;
  orders: number;
  seed: number;
  batchSize: number;
  help: boolean;
}

const MAX_DOCUMENTS = 100_000_000;

function integerOption(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return fallback;
  const text = raw.replace(/_/g, '');
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} must be a whole number, got "${raw}"`);
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be between ${min} and ${max}, got ${raw}`);
  }
  return value;
}

function parseSeedArgs(argv: string[]): SeedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        fixtures: { type: 'boolean', default: false },
        products: { type: 'string' },
        orders: { type: 'string' },
        seed: { type: 'string' },
        'batch-size': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values } = parsed;
  const generating = values.products !== undefined || values.orders !== undefined;
  return {
    help: values.help,
    fixtures: values.fixtures || !generating,
    products: integerOption('products', values.products, 0, 0, MAX_DOCUMENTS),
    orders: integerOption('orders', values.orders, 0, 0, MAX_DOCUMENTS),
    seed: integerOption('seed', values.seed, 1, 0, 0xffff_ffff),
    batchSize: integerOption('batch-size', values['batch-size'], DEFAULT_BATCH_SIZE, 1, MAX_BATCH_SIZE),
  };
}

const numberFormat = new Intl.NumberFormat('en-US');
const count = (value: number) => numberFormat.format(Math.round(value));

/** A bar on a terminal; elsewhere (CI, pipes) one line per ~10% so logs stay readable. */
function progressReporter(total: number): { update(progress: LoadProgress): void; stop(): void } {
  if (total === 0) return { update() {}, stop() {} };
  if (process.stdout.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format:
          'seeding {phase} [{bar}] {percentage}% | {value}/{total} docs | {rate} docs/s | ETA {eta_formatted}',
        stream: process.stdout,
        hideCursor: true,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    const started = performance.now();
    bar.start(total, 0, { phase: 'products', rate: '0' });
    return {
      update(progress) {
        const seconds = (performance.now() - started) / 1000;
        bar.update(progress.overallDone, {
          phase: progress.phase.padEnd(8),
          rate: count(seconds > 0 ? progress.overallDone / seconds : 0),
        });
      },
      stop: () => bar.stop(),
    };
  }
  let nextTenth = 1;
  return {
    update(progress) {
      const tenth = Math.floor((progress.overallDone * 10) / total);
      if (tenth >= nextTenth) {
        nextTenth = tenth + 1;
        console.log(`seeding: ${tenth * 10}% (${count(progress.overallDone)}/${count(total)} documents)`);
      }
    },
    stop() {},
  };
}

async function run(args: SeedArgs): Promise<void> {
  const config = loadConfig();
  let tool: ToolDatabase | undefined;
  let database: Database | undefined;
  try {
    tool = await openToolDatabase(config);
    // No reply deadline: rebuilding the order indexes after a 1,000,000-order load took 66 s.
    database = await connectDatabase({ uri: tool.uri, dbName: config.mongo.dbName, socketTimeoutMS: 0 });
    const created = await ensureIndexes(database.db);
    if (created.length > 0) console.log(`Created indexes: ${created.join(', ')}`);

    const generating = args.products > 0 || args.orders > 0;
    if (!generating) {
      const loaded = await loadFixtures(database.db);
      console.log(
        `Loaded the fixtures into "${config.mongo.dbName}": ${loaded.products} products, ${loaded.orders} orders.`,
      );
    } else {
      await generate(args, database, config.mongo.dbName);
    }
    if (generating && !args.fixtures) console.log(FIXTURES_REPLACED);
    console.log(
      tryItLines(await sampleCustomers(database.db), listenUrl(config.host, config.port)).join('\n'),
    );
  } finally {
    await database?.close().catch(() => undefined);
    await tool?.release();
  }
}

async function generate(args: SeedArgs, database: Database, dbName: string): Promise<void> {
  const progress = progressReporter(args.products + args.orders);
  let result;
  try {
    result = await loadGenerated(database.db, {
      seed: args.seed,
      products: args.products,
      orders: args.orders,
      withFixtures: args.fixtures,
      batchSize: args.batchSize,
      onProgress: (update) => progress.update(update),
    });
  } finally {
    progress.stop();
  }
  const fixtures =
    result.fixtures.products + result.fixtures.orders > 0
      ? ` after the fixtures (${result.fixtures.products} products, ${result.fixtures.orders} orders)`
      : '';
  console.log(
    `Seeded "${dbName}" with seed ${args.seed}${fixtures}: ` +
      `${count(result.products)} products, ${count(result.orders)} orders ` +
      `in ${(result.elapsedMs / 1000).toFixed(1)} s (${count(result.docsPerSecond)} docs/s).`,
  );
}

async function main(): Promise<number> {
  let args: SeedArgs;
  try {
    args = parseSeedArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`seed: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    await run(args);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`seed: ${error.message}`);
      return 2;
    }
    console.error(`seed: failed: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  }
}

// Exit explicitly: a failed connection attempt must not leave the process waiting on a socket.
process.exit(await main());
