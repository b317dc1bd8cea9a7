import path from 'node:path';
import cliProgress from 'cli-progress';
import { loadConfig } from '../src/config';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/engine';
import { connectDatabase, ensureIndexes, type Database } from '../src/db/mongo';
import {
  backfillSearchGrams,
  DEFAULT_BACKFILL_BATCH,
  MAX_BACKFILL_BATCH,
  type BackfillProgress,
} from '../src/db/search-backfill';
import { readCommandLine, usageError } from './command-line';

const USAGE = `Usage: npm run search:index -- [--all [--after ID]] [--batch-size B]

Writes the search grams (search_grams, search_grams_version) onto the products that lack them or
carry grams made by older rules. Search stays exact without them but falls back to a scan of every
product while any product lacks them (the server logs a warning and reports the number in
/metrics as products_without_search_grams).

  --all             Every product, not only those without current grams: run it after another
                    system changed the text of products it did not re-index.
  --after ID        With --all: resume after this product id (printed when a run is interrupted).
  --batch-size B    Products per batch, 1-${MAX_BACKFILL_BATCH} (default ${DEFAULT_BACKFILL_BATCH}).
  -h, --help        Show this help.

Each batch is written on its own: an interrupted run loses nothing, and a second run continues
with what is still missing. The database is MONGODB_URI / MONGODB_DB (or the embedded one).

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
        const tenth = progress.total > 0 ? Math.floor((progress.done * 10) / progress.total) : 0;
        if (tenth >= nextTenth) {
          nextTenth = tenth + 1;
          console.log(`search grams: ${tenth * 10}% (${progress.done}/${progress.total} products)`);
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
      if (!last) bar.start(Math.max(progress.total, progress.done), 0);
      last = progress;
      bar.setTotal(Math.max(progress.total, progress.done));
      bar.update(progress.done);
    },
    stop: () => last && bar.stop(),
  };
}

async function main(): Promise<void> {
  const { values } = readCommandLine(USAGE, {
    all: { type: 'boolean' },
    after: { type: 'string' },
    'batch-size': { type: 'string' },
  });
  const batchSize = wholeNumber(
    'batch-size',
    values['batch-size'],
    DEFAULT_BACKFILL_BATCH,
    MAX_BACKFILL_BATCH,
  );
  if (values.after !== undefined && !values.all) usageError('--after needs --all', USAGE);
  const afterId =
    values.after === undefined ? undefined : wholeNumber('after', values.after, 0, Number.MAX_SAFE_INTEGER);
  const config = loadConfig();
  let embedded: EmbeddedDatabase | undefined;
  let database: Database | undefined;
  const bar = progressBar();
  let last: BackfillProgress | undefined;
  try {
    let uri = config.mongo.uri;
    if (uri === undefined) {
      embedded = await startEmbeddedDatabase({ dataDir: path.join(config.dataDir, 'db') });
      uri = embedded.uri;
    }
    database = await connectDatabase({ uri, dbName: config.mongo.dbName });
    await ensureIndexes(database.db);
    const started = performance.now();
    const result = await backfillSearchGrams(database.db, {
      batchSize,
      all: values.all ?? false,
      ...(afterId === undefined ? {} : { afterId }),
      onProgress: (progress) => {
        last = progress;
        bar.update(progress);
      },
    });
    bar.stop();
    console.log(
      `Search grams written on ${result.done} products in ${((performance.now() - started) / 1000).toFixed(1)} s.`,
    );
  } catch (error) {
    bar.stop();
    if (values.all && last && Number.isFinite(last.lastId))
      console.error(`Interrupted: resume with npm run search:index -- --all --after ${last.lastId}`);
    throw error;
  } finally {
    await database?.close().catch(() => undefined);
    await embedded?.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
