import { totalmem } from 'node:os';

/**
 * The embedded PostgreSQL cluster's settings, declared once; the launcher passes each as
 * `-c name=value`. Why each matters is in ../shared/research/ferretdb2-documentdb.md.
 */

/** The database FerretDB keeps its data in, and pg_cron's jobs run in. */
export const POSTGRES_DATABASE = 'postgres';
export const POSTGRES_ROLE = 'postgres';

const MIB = 1024 * 1024;

/**
 * A quarter of the machine's memory, between PostgreSQL's default 128 MB and 4 GB: PostgreSQL's
 * own sizing advice. A count or search visits every row it counts; a page in shared buffers
 * costs ~1.6 µs, one copied in from the OS cache ~3.6 µs (a common word's count at 1,000,000
 * products: 0.59 s with 128 MB, 0.30 s with the table held). Memory is only used as pages are read.
 */
function sharedBuffersFor(totalMemoryBytes: number): string {
  return `${Math.round(Math.min(4096, Math.max(128, totalMemoryBytes / 4 / MIB)))}MB`;
}

export const POSTGRES_SETTINGS: Readonly<Record<string, string>> = {
  shared_preload_libraries: 'pg_cron,pg_documentdb_core,pg_documentdb',
  'cron.database_name': POSTGRES_DATABASE,
  'cron.log_run': 'off',
  // Without it FerretDB closes its pooled connection after every sorted find or count, and the
  // next query pays for a new backend (5-8 ms).
  'documentdb.useFileBasedPersistedCursors': 'on',
  // Sorts on _id are served by the primary key (a first page in 1 ms instead of a scan and a sort).
  'documentdb.enableSortbyIdPushDownToPrimaryKey': 'on',
  shared_buffers: sharedBuffersFor(totalmem()),
  // Loading a million documents grew the WAL past 1 GB with the default.
  max_wal_size: '256MB',
  // A count or gram search over ~100,000+ matching rows builds a bitmap larger than the default
  // 4 MB allows, which goes lossy and rechecks whole pages: one gram's count at 1,000,000 products
  // took 3.9 s with 4 MB and 0.8 s with 64 MB. Per sort or hash operation, not per connection.
  work_mem: '64MB',
  // Unix socket only, in the data folder; no TCP listener at all.
  listen_addresses: '',
  // The change feed reads the log through a logical replication slot (src/db/feed/log.ts): every
  // committed insert, update and delete, whoever wrote it. Each instance of a fleet holds one
  // temporary slot and one instance the fleet's lasting one, hence room for many.
  wal_level: 'logical',
  max_replication_slots: '64',
  max_wal_senders: '64',
  // A gateway stopped for hours cannot fill the disk: past this its lasting slot is invalidated and
  // the feed resyncs on its next start (src/db/feed/log.ts). A slot cannot move past a transaction
  // still open, and one updateMany of 20,000 products wrote 996 MB of WAL (docs/benchmarks.md): 1 GB
  // invalidated both slots during it.
  max_slot_wal_keep_size: '4GB',
};

/** For throw-away clusters (tests, bench): durability traded for speed. */
export const THROWAWAY_SETTINGS: Readonly<Record<string, string>> = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  // Planner statistics within a second or two of a bulk load (the explain tests wait for them;
  // with the default of a minute they waited that long).
  autovacuum_naptime: '1s',
  // Every test file's database has its lasting slot (dropped with the database) beside the servers'
  // temporary ones.
  max_replication_slots: '256',
};
