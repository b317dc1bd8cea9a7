/**
 * The embedded database as the rest of the project sees it: FerretDB 2.5 in front of PostgreSQL 15
 * with DocumentDB, built once, launched on loopback, supervised, stopped. It imports nothing of
 * the gateway; the gateway imports this file only where the process starts (src/server.ts and
 * scripts/), and gets back what any MongoDB gives it: a `mongodb://` URI.
 */
export { ensureEmbeddedEngine, type BuildOptions } from './build';
export { EngineBuildError } from './build-tools';
export { startEmbeddedDatabase, type EmbeddedDatabase, type EmbeddedOptions } from './launch';
export {
  findRunningDatabase,
  publishRunningDatabase,
  RUNNING_FILE,
  type RunningDatabase,
} from './running-file';
export { CLUSTER_OS_USER, FERRETDB_VERSION, POSTGRES_MAJOR } from './pins';
export { superviseEmbeddedDatabase, type SupervisorOptions } from './supervisor';
