import { chown, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { ensureEmbeddedEngine } from './build';
import { ferretdbBinaryPath, POSTGRES_BIN_DIR } from './pins';
import {
  checkSocketPath,
  clearStalePidFile,
  clusterUser,
  createExtension,
  initCluster,
  letClusterUserThrough,
  postgresArgs,
  postgresqlUrl,
  waitForPostgres,
  withoutVariables,
  type OsUser,
} from './postgres-cluster';
import { freeLoopbackPort, hasExited, signalChild, spawnGuarded, type Guarded } from './guarded-child';

/**
 * The embedded development database: a PostgreSQL 15 cluster with DocumentDB under `dataDir`
 * (reachable only through a unix socket in its own folder) and FerretDB in front of it on a
 * loopback port, without auth or telemetry. Each runs under a small `sh` guard that stops it when
 * our stdin pipe closes, so neither can outlive this process, even one killed with SIGKILL. The
 * two are one database: when either exits, the other is stopped and `exited` settles.
 */

export interface EmbeddedDatabase {
  uri: string;
  /** PostgreSQL itself, through its socket, as a superuser: for reading its log (src/db/feed/log.ts). */
  postgresUrl: string;
  port: number;
  /** PID of FerretDB's guard process; FerretDB is its only child. */
  pid: number;
  /** The guard PIDs of PostgreSQL (its backends run below it) and FerretDB: the database's processes. */
  pids: readonly number[];
  dataDir: string;
  /** A throw-away cluster: started without durability (see THROWAWAY_SETTINGS). */
  throwaway: boolean;
  /** Settles when PostgreSQL and FerretDB (and their guards) have exited, for whatever reason. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  startTimeoutMs?: number;
  /** A fixed loopback port (e.g. to restart on the same address); default: a free one. */
  port?: number;
  /** Tests and benchmarks: no fsync, no synchronous commit, no full-page writes. */
  throwaway?: boolean;
  /** PostgreSQL settings over the defaults (a test's small bound on the WAL a slot may hold). */
  settings?: Readonly<Record<string, string>>;
  log?: (line: string) => void;
}

const POSTGRES_STOP_MS = 15_000;

interface Layout {
  dataDir: string;
  pgdata: string;
  stateDir: string;
  postgresLog: string;
  ferretdbLog: string;
}

function layoutOf(dataDir: string): Layout {
  return {
    dataDir,
    pgdata: path.join(dataDir, 'postgres'),
    stateDir: path.join(dataDir, 'ferretdb'),
    postgresLog: path.join(dataDir, 'postgres.log'),
    ferretdbLog: path.join(dataDir, 'ferretdb.log'),
  };
}

let engineChecked: Promise<unknown> | undefined;

/** The build's stamp is checked once per process (building first when we may). */
function engineReady(log: (line: string) => void): Promise<unknown> {
  engineChecked ??= ensureEmbeddedEngine({ log }).catch((error: unknown) => {
    engineChecked = undefined;
    throw error;
  });
  return engineChecked;
}

async function waitForPing(
  uri: string,
  postgres: Guarded,
  ferretdb: Guarded,
  deadline: number,
): Promise<void> {
  for (;;) {
    if (hasExited(ferretdb)) throw new Error('FerretDB exited during start-up');
    if (hasExited(postgres)) throw new Error('PostgreSQL exited during start-up');
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 });
    try {
      await client.db('admin').command({ ping: 1 });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error('FerretDB did not answer a ping in time');
      await sleep(100);
    } finally {
      await client.close().catch(() => undefined);
    }
  }
}

async function logTails(layout: Layout): Promise<string> {
  const tail = async (file: string) =>
    (await readFile(file, 'utf8').catch(() => ''))
      .trim()
      .split('\n')
      .slice(-8)
      .map((line) => `  ${path.basename(file)}: ${line}`)
      .join('\n');
  return [await tail(layout.postgresLog), await tail(layout.ferretdbLog)].filter(Boolean).join('\n');
}

/** One attempt: PostgreSQL, the extension, FerretDB. Throws with both stopped. */
async function launchBoth(
  layout: Layout,
  user: OsUser | undefined,
  port: number,
  throwaway: boolean,
  deadline: number,
  settings: Readonly<Record<string, string>> = {},
): Promise<{ postgres: Guarded; ferretdb: Guarded; uri: string }> {
  await clearStalePidFile(layout.pgdata);
  const postgres = spawnGuarded(
    'postgres',
    path.join(POSTGRES_BIN_DIR, 'postgres'),
    postgresArgs(layout.pgdata, layout.dataDir, throwaway, settings),
    {
      logFile: layout.postgresLog,
      env: withoutVariables(['PG']),
      user,
      stopSignal: 'INT', // fast shutdown: rolls back open transactions instead of waiting for clients
    },
  );
  let ferretdb: Guarded | undefined;
  try {
    await waitForPostgres(layout.pgdata, postgres, deadline);
    await createExtension(layout.pgdata);
    const uri = `mongodb://127.0.0.1:${port}/`;
    ferretdb = spawnGuarded(
      'ferretdb',
      ferretdbBinaryPath(),
      [
        `--postgresql-url=${postgresqlUrl(layout.pgdata)}`,
        `--listen-addr=127.0.0.1:${port}`,
        '--debug-addr=',
        '--no-auth',
        `--state-dir=${layout.stateDir}`,
        '--telemetry=disable',
        '--log-level=warn',
      ],
      { logFile: layout.ferretdbLog, env: withoutVariables(['FERRETDB_']), user, stopSignal: 'TERM' },
    );
    await waitForPing(uri, postgres, ferretdb, deadline);
    return { postgres, ferretdb, uri };
  } catch (error) {
    await ferretdb?.stop(5_000);
    await postgres.stop(POSTGRES_STOP_MS);
    throw error;
  }
}

async function prepareDataDir(layout: Layout, user: OsUser | undefined): Promise<void> {
  await mkdir(layout.stateDir, { recursive: true });
  if (user) {
    // FerretDB runs as that user too: nothing listening on a port runs as root.
    for (const entry of ['', ...(await readdir(layout.stateDir))]) {
      await chown(path.join(layout.stateDir, entry), user.uid, user.gid);
    }
    await letClusterUserThrough(layout.dataDir, user);
    await letClusterUserThrough(path.dirname(ferretdbBinaryPath()), user);
  }
  checkSocketPath(layout.pgdata);
}

export async function startEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { startTimeoutMs = 60_000, throwaway = false, log = (line: string) => console.error(line) } = options;
  const layout = layoutOf(path.resolve(options.dataDir));
  await engineReady(log);
  const user = await clusterUser();
  await prepareDataDir(layout, user);
  await initCluster(layout.pgdata, user, throwaway);

  const deadline = Date.now() + startTimeoutMs;
  let lastError: unknown;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freeLoopbackPort());
    try {
      const { postgres, ferretdb, uri } = await launchBoth(
        layout,
        user,
        port,
        throwaway,
        deadline,
        options.settings,
      );
      return assemble(layout, port, uri, throwaway, postgres, ferretdb);
    } catch (error) {
      lastError = error;
      if (Date.now() > deadline || attempt >= 10) break;
      await sleep(Math.min(250 * attempt, 2_000));
    }
  }
  throw new Error(
    `The embedded database did not start: ${(lastError as Error)?.message}\n${await logTails(layout)}`,
  );
}

function assemble(
  layout: Layout,
  port: number,
  uri: string,
  throwaway: boolean,
  postgres: Guarded,
  ferretdb: Guarded,
): EmbeddedDatabase {
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await ferretdb.stop(10_000);
      await postgres.stop(POSTGRES_STOP_MS);
      process.removeListener('exit', onProcessExit);
    })();
    return stopping;
  };
  // Node exiting closes the guards' stdin too; this only makes it prompt.
  const onProcessExit = () => {
    signalChild(ferretdb.child, 'SIGTERM', false);
    signalChild(postgres.child, 'SIGTERM', false);
  };
  process.once('exit', onProcessExit);
  // Half a database is none: whichever exits first takes the other with it.
  void Promise.race([postgres.exited, ferretdb.exited]).then(stop);
  const exited = Promise.all([postgres.exited, ferretdb.exited]).then(() => undefined);
  return {
    uri,
    postgresUrl: postgresqlUrl(layout.pgdata),
    port,
    pid: ferretdb.child.pid ?? -1,
    pids: [postgres.child.pid ?? -1, ferretdb.child.pid ?? -1],
    dataDir: layout.dataDir,
    throwaway,
    exited,
    stop,
  };
}
