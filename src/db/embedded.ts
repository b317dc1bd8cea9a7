import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import {
  chown,
  readdir,
  mkdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  unlink,
} from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { ensureEmbeddedEngine } from './engine-build';
import { CLUSTER_OS_USER, ferretdbBinaryPath, POSTGRES_BIN_DIR } from './engine-pins';
import { POSTGRES_DATABASE, POSTGRES_ROLE, POSTGRES_SETTINGS, THROWAWAY_SETTINGS } from './engine-settings';
import { freeLoopbackPort, GUARD_SCRIPT, waitForExit } from '../guarded-child';

/**
 * The embedded development database: a PostgreSQL 15 cluster with DocumentDB under `dataDir`
 * (reachable only through a unix socket in its own folder) and FerretDB in front of it on a
 * loopback port, without auth or telemetry. Each runs under a small `sh` guard that stops it when
 * our stdin pipe closes, so neither can outlive this process, even one killed with SIGKILL. The
 * two are one database: when either exits, the other is stopped and `exited` settles.
 */

export interface EmbeddedDatabase {
  uri: string;
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
  log?: (line: string) => void;
}

const run = promisify(execFile);

/** PostgreSQL's port only names its socket file (`.s.PGSQL.<port>`); it listens on no TCP port. */
const SOCKET_PORT = 5432;
/** sun_path is 108 bytes on Linux. */
const MAX_SOCKET_PATH = 107;
const POSTGRES_STOP_MS = 15_000;

interface OsUser {
  uid: number;
  gid: number;
}

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

/** PostgreSQL refuses to run as root: then the cluster runs as the build's unprivileged user. */
async function clusterUser(): Promise<OsUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', CLUSTER_OS_USER]),
    run('id', ['-g', CLUSTER_OS_USER]),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function withoutVariables(prefixes: string[]): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !prefixes.some((prefix) => name.startsWith(prefix))),
  );
}

/** initdb into a side folder, renamed into place when complete, so a killed initdb is never a cluster. */
async function initCluster({ pgdata }: Layout, user: OsUser | undefined, throwaway: boolean): Promise<void> {
  if (await exists(path.join(pgdata, 'PG_VERSION'))) return;
  const partial = `${pgdata}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { mode: 0o700 });
  if (user) await chown(partial, user.uid, user.gid);
  await run(
    path.join(POSTGRES_BIN_DIR, 'initdb'),
    [
      `--pgdata=${partial}`,
      `--username=${POSTGRES_ROLE}`,
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      ...(throwaway ? ['--no-sync'] : []),
    ],
    { ...user, env: withoutVariables(['PG', 'LC_']), timeout: 120_000 },
  ).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`initdb failed: ${(error.stderr || error.message).trim()}`);
  });
  await rm(pgdata, { recursive: true, force: true });
  await rename(partial, pgdata);
}

/** A live process whose command line names `postgres` and whose working folder is `pgdata`. */
async function livePostmaster(pid: number, pgdata: string): Promise<boolean> {
  try {
    const [command, cwd, folder] = await Promise.all([
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
      readlink(`/proc/${pid}/cwd`),
      realpath(pgdata),
    ]);
    return command.includes('postgres') && cwd === folder;
  } catch {
    return false;
  }
}

/**
 * A postmaster.pid left by a killed run names a PID that may since belong to another process,
 * which PostgreSQL would take for a running server: such a file is removed. A PostgreSQL still
 * running on this folder (e.g. one still shutting down) is an error the caller retries.
 */
async function clearStalePidFile({ pgdata }: Layout): Promise<void> {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  if (await livePostmaster(pid, pgdata)) {
    throw new Error(`PostgreSQL (PID ${pid}) is still running on ${pgdata}`);
  }
  let alive = true;
  try {
    process.kill(pid, 0);
  } catch (error) {
    alive = (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A dead PID PostgreSQL handles itself (and checks that no orphaned backend still holds the
  // shared memory); a reused one it would not.
  if (alive) await unlink(pidFile).catch(() => undefined);
}

interface Guarded {
  child: ChildProcess;
  exited: Promise<void>;
  stop(timeoutMs: number): Promise<void>;
}

/** Runs `binary args` under the guard, its output appended to `logFile` by the child itself. */
function guarded(
  name: string,
  binary: string,
  args: string[],
  {
    logFile,
    env,
    user,
    stopSignal,
  }: { logFile: string; env: NodeJS.ProcessEnv; user?: OsUser; stopSignal: string },
): Guarded {
  const output = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn('sh', ['-c', GUARD_SCRIPT, `${name}-guard`, binary, ...args], {
      env: { ...env, GUARD_STOP_SIGNAL: stopSignal },
      detached: true,
      stdio: ['pipe', output, output],
      ...user,
    });
  } finally {
    closeSync(output);
  }
  // The process group is ours to stop; do not keep Node alive for it.
  child.unref();
  (child.stdin as unknown as net.Socket | null)?.unref?.();
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let stopping: Promise<void> | undefined;
  const stop = (timeoutMs: number): Promise<void> => {
    stopping ??= (async () => {
      child.stdin?.end();
      signal(child, 'SIGTERM', false);
      if (!(await waitForExit(child, timeoutMs))) {
        signal(child, 'SIGKILL', true);
        await waitForExit(child, 5_000);
      }
    })();
    return stopping;
  };
  return { child, exited, stop };
}

function signal(child: ChildProcess, name: NodeJS.Signals, wholeGroup: boolean): void {
  if (child.pid === undefined) return;
  try {
    process.kill(wholeGroup ? -child.pid : child.pid, name);
  } catch {
    // already gone
  }
}

function postgresArgs(layout: Layout, throwaway: boolean): string[] {
  const settings = {
    ...POSTGRES_SETTINGS,
    ...(throwaway ? THROWAWAY_SETTINGS : {}),
    unix_socket_directories: layout.pgdata,
    port: String(SOCKET_PORT),
    // pg_cron (DocumentDB's background jobs) and DocumentDB itself (e.g. createIndexes) connect back
    // to the server over libpq: through the socket too, as there is no TCP listener.
    'cron.host': layout.pgdata,
    'documentdb.localhost_connection_string': `host='${layout.pgdata}'`,
    // In every PostgreSQL process title, so `ps` ties each backend to its data folder.
    cluster_name: layout.dataDir,
  };
  return [
    '-D',
    layout.pgdata,
    ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ];
}

/** The PID's parent, from /proc (undefined once it is gone). */
async function parentOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after its last ')'.
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}

/**
 * PostgreSQL writes "ready" into postmaster.pid's status line once it accepts connections. The
 * file must be this start's (its PID a child of our guard): a killed run's file says "ready" too.
 */
async function waitForPostgres(layout: Layout, postgres: Guarded, deadline: number): Promise<void> {
  const pidFile = path.join(layout.pgdata, 'postmaster.pid');
  for (;;) {
    if (hasExited(postgres)) throw new Error('PostgreSQL exited during start-up');
    const lines = (await readFile(pidFile, 'utf8').catch(() => '')).split('\n');
    if (lines[7]?.trim() === 'ready' && (await parentOf(Number(lines[0]))) === postgres.child.pid) return;
    if (Date.now() > deadline) throw new Error('PostgreSQL did not become ready in time');
    await sleep(50);
  }
}

async function createExtension(layout: Layout): Promise<void> {
  await run(
    path.join(POSTGRES_BIN_DIR, 'psql'),
    [
      `--host=${layout.pgdata}`,
      `--port=${SOCKET_PORT}`,
      `--username=${POSTGRES_ROLE}`,
      `--dbname=${POSTGRES_DATABASE}`,
      '--no-psqlrc',
      '--quiet',
      '--set=ON_ERROR_STOP=1',
      '--command=SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS documentdb CASCADE',
    ],
    { env: withoutVariables(['PG']), timeout: 60_000 },
  ).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`CREATE EXTENSION documentdb failed: ${(error.stderr || error.message).trim()}`);
  });
}

function postgresqlUrl(layout: Layout): string {
  const query = new URLSearchParams({ host: layout.pgdata, port: String(SOCKET_PORT), user: POSTGRES_ROLE });
  return `postgres:///${POSTGRES_DATABASE}?${query}`;
}

function hasExited({ child }: Guarded): boolean {
  return child.exitCode !== null || child.signalCode !== null;
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
): Promise<{ postgres: Guarded; ferretdb: Guarded; uri: string }> {
  await clearStalePidFile(layout);
  const postgres = guarded(
    'postgres',
    path.join(POSTGRES_BIN_DIR, 'postgres'),
    postgresArgs(layout, throwaway),
    {
      logFile: layout.postgresLog,
      env: withoutVariables(['PG']),
      user,
      stopSignal: 'INT', // fast shutdown: rolls back open transactions instead of waiting for clients
    },
  );
  let ferretdb: Guarded | undefined;
  try {
    await waitForPostgres(layout, postgres, deadline);
    await createExtension(layout);
    const uri = `mongodb://127.0.0.1:${port}/`;
    ferretdb = guarded(
      'ferretdb',
      ferretdbBinaryPath(),
      [
        `--postgresql-url=${postgresqlUrl(layout)}`,
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

/**
 * The cluster's user must be able to reach its folder inside ours: every folder on the way that
 * it cannot pass gets an ACL entry letting that one user through (x only, no listing), rather than
 * opening the folder to everyone (e.g. a mkdtemp folder, or a project under /root).
 */
async function letClusterUserThrough(dir: string, user: OsUser): Promise<void> {
  for (let current = dir; ; current = path.dirname(current)) {
    const { mode, uid } = await stat(current);
    const passable = uid === user.uid ? (mode & 0o100) !== 0 : (mode & 0o001) !== 0;
    if (!passable) await run('setfacl', ['--modify', `user:${CLUSTER_OS_USER}:x`, current]);
    if (current === path.dirname(current)) return;
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
  const socket = path.join(layout.pgdata, `.s.PGSQL.${SOCKET_PORT}`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(
      `The data folder's path is too long for PostgreSQL's socket (${socket}); use a shorter DATA_DIR`,
    );
  }
}

export async function startEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { startTimeoutMs = 60_000, throwaway = false, log = (line: string) => console.error(line) } = options;
  const layout = layoutOf(path.resolve(options.dataDir));
  await engineReady(log);
  const user = await clusterUser();
  await prepareDataDir(layout, user);
  await initCluster(layout, user, throwaway);

  const deadline = Date.now() + startTimeoutMs;
  let lastError: unknown;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freeLoopbackPort());
    try {
      const { postgres, ferretdb, uri } = await launchBoth(layout, user, port, throwaway, deadline);
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
    signal(ferretdb.child, 'SIGTERM', false);
    signal(postgres.child, 'SIGTERM', false);
  };
  process.once('exit', onProcessExit);
  // Half a database is none: whichever exits first takes the other with it.
  void Promise.race([postgres.exited, ferretdb.exited]).then(stop);
  const exited = Promise.all([postgres.exited, ferretdb.exited]).then(() => undefined);
  return {
    uri,
    port,
    pid: ferretdb.child.pid ?? -1,
    pids: [postgres.child.pid ?? -1, ferretdb.child.pid ?? -1],
    dataDir: layout.dataDir,
    throwaway,
    exited,
    stop,
  };
}
