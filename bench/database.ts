import path from 'node:path';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/engine';
import { connectDatabase, ensureIndexes, type Database } from '../src/db/mongo';
import { loadGenerated } from '../seed/load';
import { descendants } from './proc';

/**
 * The benchmark database: its own embedded database in bench/.data (or MONGODB_URI), seeded by the
 * deterministic generator. A marker document records what was loaded, so a later run with the same
 * seed and sizes reuses the data instead of loading it again.
 */

export interface BenchDataSpec {
  seed: number;
  products: number;
  orders: number;
}

export interface SeedReport extends BenchDataSpec {
  reused: boolean;
  /** Generation + insertion time when this run loaded the data. */
  elapsedMs?: number;
  docsPerSecond?: number;
}

export interface BenchDatabase {
  /** What answers: the embedded database (PostgreSQL + FerretDB) or MONGODB_URI. */
  kind: 'embedded' | 'uri';
  uri: string;
  dbName: string;
  database: Database;
  embedded?: EmbeddedDatabase;
  seed: SeedReport;
  /**
   * PIDs whose CPU is the database's (the embedded launcher and every process under it: PostgreSQL's
   * postmaster and backends, FerretDB); empty for MONGODB_URI. Read again at each measurement:
   * backends come and go (their CPU stays in their parent's reaped-children total, see bench/proc.ts).
   */
  serverPids(): Promise<number[]>;
  stop(): Promise<void>;
}

/** What each kind of benchmark database is, in the report's words. */
export const DATABASE_LABELS: Record<BenchDatabase['kind'], string> = {
  embedded: 'the embedded database (FerretDB 2.5 + DocumentDB 0.106 on PostgreSQL 15)',
  uri: 'MONGODB_URI',
};

const MARKER_COLLECTION = 'bench_marker';
/** Bump when the generator's output or the stored documents change (2: `_id` keys), so stale benchmark data is reloaded. */
const GENERATOR_VERSION = 2;

export async function openBenchDatabase(options: {
  spec: BenchDataSpec;
  dbName: string;
  dataDir: string;
  log: (line: string) => void;
}): Promise<BenchDatabase> {
  const { spec, dbName, dataDir, log } = options;
  let embedded: EmbeddedDatabase | undefined;
  let uri = process.env.MONGODB_URI;
  const kind = uri ? 'uri' : 'embedded';
  if (!uri) {
    const folder = path.join(dataDir, 'embedded');
    log(`starting the benchmark's embedded database in ${path.relative(process.cwd(), folder)}`);
    embedded = await startEmbeddedDatabase({ dataDir: folder, throwaway: true, log });
    uri = embedded.uri;
  }
  const database = await connectDatabase({ uri, dbName });
  try {
    await ensureIndexes(database.db);
    const markers = database.db.collection<{ _id: string } & BenchDataSpec & { version: number }>(
      MARKER_COLLECTION,
    );
    const marker = await markers.findOne({ _id: 'data' });
    let seed: SeedReport;
    if (
      marker &&
      marker.seed === spec.seed &&
      marker.products === spec.products &&
      marker.orders === spec.orders &&
      marker.version === GENERATOR_VERSION
    ) {
      log(
        `reusing seeded data in ${dbName}: ${spec.products} products, ${spec.orders} orders, seed ${spec.seed}`,
      );
      seed = { ...spec, reused: true };
    } else {
      log(`seeding ${dbName}: ${spec.products} products, ${spec.orders} orders, seed ${spec.seed} …`);
      await markers.deleteMany({});
      let lastPercent = -10;
      const result = await loadGenerated(database.db, {
        ...spec,
        onProgress: (progress) => {
          const percent = Math.floor((progress.overallDone / progress.overallTotal) * 100);
          if (percent >= lastPercent + 10) {
            lastPercent = percent;
            log(`  ${percent}% (${progress.phase} ${progress.done}/${progress.total})`);
          }
        },
      });
      await markers.insertOne({ _id: 'data', ...spec, version: GENERATOR_VERSION });
      seed = {
        ...spec,
        reused: false,
        elapsedMs: Math.round(result.elapsedMs),
        docsPerSecond: Math.round(result.docsPerSecond),
      };
      log(`seeded in ${(result.elapsedMs / 1000).toFixed(1)} s (${seed.docsPerSecond} documents/s)`);
    }
    return {
      kind,
      uri,
      dbName,
      database,
      embedded,
      seed,
      serverPids: async () => {
        if (!embedded) return [];
        const trees = await Promise.all(embedded.pids.map(async (pid) => [pid, ...(await descendants(pid))]));
        return trees.flat();
      },
      async stop() {
        await database.close().catch(() => undefined);
        await embedded?.stop();
      },
    };
  } catch (error) {
    await database.close().catch(() => undefined);
    await embedded?.stop();
    throw error;
  }
}
