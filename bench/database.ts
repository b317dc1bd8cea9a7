import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/db/embedded';
import { connectDatabase, ensureIndexes, type Database } from '../src/db/mongo';
import { loadGenerated } from '../seed/load';

/**
 * The benchmark database: its own embedded FerretDB in bench/.data (or MONGODB_URI), seeded by the
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

export type Backend = 'memory' | 'ferretdb';

export interface BenchDatabase {
  /** What answers: the bench's in-memory stand-in, the embedded FerretDB, or MONGODB_URI. */
  kind: 'memory' | 'ferretdb' | 'uri';
  uri: string;
  dbName: string;
  database: Database;
  embedded?: EmbeddedDatabase;
  seed: SeedReport;
  /** PIDs whose CPU is the database's (the memory stand-in, or FerretDB and its guard); empty for MONGODB_URI. */
  serverPids(): Promise<number[]>;
  stop(): Promise<void>;
}

const MARKER_COLLECTION = 'bench_marker';
/** Bump when the generator's output changes, so stale benchmark data is reloaded. */
const GENERATOR_VERSION = 1;

async function descendants(pid: number): Promise<number[]> {
  const found: number[] = [];
  const walk = async (parent: number) => {
    let tasks: string[] = [];
    try {
      tasks = await readdir(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      const children = await readFile(`/proc/${parent}/task/${task}/children`, 'utf8').catch(() => '');
      for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
        found.push(child);
        await walk(child);
      }
    }
  };
  await walk(pid);
  return found;
}

interface MemoryDatabase {
  uri: string;
  pid: number;
  stop(): Promise<void>;
}

/** bench/memory-mongo.ts as its own process (its CPU is the database's, not a server's). */
async function startMemoryDatabase(snapshot: string): Promise<MemoryDatabase> {
  await mkdir(path.dirname(snapshot), { recursive: true });
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/memory-mongo.ts', '--port', '0', '--snapshot', snapshot],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`bench memory database exited (${code}): ${output}`)));
  });
  const uri = `mongodb://127.0.0.1:${port}/`;
  for (let attempt = 0; ; attempt++) {
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1_000 });
    try {
      await client.db('admin').command({ ping: 1 });
      break;
    } catch (error) {
      if (attempt > 50) throw error;
      await sleep(100);
    } finally {
      await client.close();
    }
  }
  return {
    uri,
    pid: child.pid ?? -1,
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin?.end();
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

export async function openBenchDatabase(options: {
  spec: BenchDataSpec;
  backend: Backend;
  dbName: string;
  dataDir: string;
  log: (line: string) => void;
}): Promise<BenchDatabase> {
  const { spec, backend, dbName, dataDir, log } = options;
  let embedded: EmbeddedDatabase | undefined;
  let memory: MemoryDatabase | undefined;
  let uri = process.env.MONGODB_URI;
  const kind = uri ? 'uri' : backend;
  if (!uri && backend === 'ferretdb') {
    const folder = path.join(dataDir, 'ferretdb');
    log(`starting the benchmark's embedded FerretDB in ${path.relative(process.cwd(), folder)}`);
    embedded = await startEmbeddedDatabase({ dataDir: folder, log });
    uri = embedded.uri;
  } else if (!uri) {
    const snapshot = path.join(dataDir, 'memory', `${dbName}.bson`);
    log(`starting the bench's in-memory database (snapshot ${path.relative(process.cwd(), snapshot)})`);
    memory = await startMemoryDatabase(snapshot);
    uri = memory.uri;
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
      if (memory) await database.db.admin().command({ benchSaveSnapshot: 1 });
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
      serverPids: async () =>
        embedded ? [embedded.pid, ...(await descendants(embedded.pid))] : memory ? [memory.pid] : [],
      async stop() {
        await database.close().catch(() => undefined);
        await embedded?.stop();
        await memory?.stop();
      },
    };
  } catch (error) {
    await database.close().catch(() => undefined);
    await embedded?.stop();
    await memory?.stop();
    throw error;
  }
}
