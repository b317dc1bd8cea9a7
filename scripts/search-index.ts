import cliProgress from 'cli-progress';
import { loadConfig } from '../src/config';
import { connectDatabase, ensureIndexes, type Database } from '../src/db/mongo';
import {
  syncSearchProjection,
  DEFAULT_BACKFILL_BATCH,
  MAX_BACKFILL_BATCH,
  type BackfillProgress,
} from '../src/db/derived/search-backfill';
import { backfillStates, statesComplete } from '../src/db/derived/search-state';
import { readCommandLine, usageError } from './command-line';
import { openToolDatabase, type ToolDatabase } from './tool-database';

const USAGE = `Usage: npm run search:index -- [--batch-size B]

Reads every product and makes the gateway's search projection (the collection product_search:
each product's search grams and the fields a search filters on, keyed by its _id) what the
products say: a row written where it is missing or differs, a row whose product is gone deleted.
Nothing is written into products. Where the server reads the engine's log it keeps the projection
exact by itself (and runs this when its log slot is new or was lost); with polling, run this
after writes the feed cannot see (no date in updated_at). Until a first run completes, searches
scan every product (the server logs a warning and reports the number in /metrics as
products_without_search_grams).

Then, once per database, it writes the products' before-images (product_search_state), which let
a filter's kept total be adjusted while outside writes are pending; a server's first start does
the same in the background when nobody ran this.

  --batch-size B    Products per batch, 1-${MAX_BACKFILL_BATCH} (default ${DEFAULT_BACKFILL_BATCH}).
  -h, --help        Show this help.

Only what differs is written: an interrupted run is finished by running it again.
The database is MONGODB_URI / MONGODB_DB; without MONGODB_URI, the embedded database of the
npm start running on DATA_DIR, else the one in DATA_DIR/db, started for this run.

Exit codes: 0 done, 1 failed, 2 invalid arguments.`;

function wholeNumber(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max)
    usageError(`--${name} must be a whole number from 1 to ${max}, got "${raw}"`, USAGE);
  return Number(raw);
}

function progressBar(): { update(progress: BackfillProgress): void; stop(): void } {
  let last: BackfillProgress | undefined;
  if (!process.stdout.isTTY) {
    let nextTenth = 1;
    return {
      update(progress) {
        last = progress;
        const tenth = progress.total > 0 ? Math.floor((progress.checked * 10) / progress.total) : 0;
        if (tenth >= nextTenth) {
          nextTenth = tenth + 1;
          console.log(`search grams: ${tenth * 10}% (${progress.checked}/${progress.total} products)`);
        }
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: 'search grams [{bar}] {percentage}% | {value}/{total} products | ETA {eta_formatted}',
      hideCursor: true,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  return {
    update(progress) {
      if (!last) bar.start(Math.max(progress.total, progress.checked), 0);
      last = progress;
      bar.setTotal(Math.max(progress.total, progress.checked));
      bar.update(progress.checked);
    },
    stop: () => last && bar.stop(),
  };
}

async function main(): Promise<void> {
  const { values } = readCommandLine(USAGE, { 'batch-size': { type: 'string' } });
  const batchSize = wholeNumber(
    'batch-size',
    values['batch-size'],
    DEFAULT_BACKFILL_BATCH,
    MAX_BACKFILL_BATCH,
  );
  const config = loadConfig();
  let tool: ToolDatabase | undefined;
  let database: Database | undefined;
  const bar = progressBar();
  try {
    tool = await openToolDatabase(config);
    database = await connectDatabase({ uri: tool.uri, dbName: config.mongo.dbName });
    await ensureIndexes(database.db);
    const started = performance.now();
    const result = await syncSearchProjection(database.db, { batchSize, onProgress: bar.update });
    bar.stop();
    console.log(
      `Search grams written for ${result.written} of ${result.checked} products (${result.removed ?? 0} rows of products gone removed) in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
    );
    if (!(await statesComplete(database.db))) {
      const imaging = performance.now();
      await backfillStates(database.db, { batchSize });
      console.log(`Before-images written in ${((performance.now() - imaging) / 1000).toFixed(1)} s.`);
    }
  } catch (error) {
    bar.stop();
    throw error;
  } finally {
    await database?.close().catch(() => undefined);
    await tool?.release();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
