import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, readFile, readlink, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CLUSTER_OS_USER, POSTGRES_BIN_DIR } from './pins';
import { POSTGRES_DATABASE, POSTGRES_ROLE, POSTGRES_SETTINGS, THROWAWAY_SETTINGS } from './settings';
import { hasExited, type Guarded } from './guarded-child';

/**
 * The embedded database's PostgreSQL cluster, one step at a time: its OS user, initdb, a stale
 * postmaster.pid, the command line (settings from engine-settings.ts), readiness, the extension.
 * The launcher (embedded.ts) runs them in order.
 */

const run = promisify(execFile);

/** PostgreSQL's port only names its socket file (`.s.PGSQL.<port>`); it listens on no TCP port. */
const SOCKET_PORT = 5432;
/** sun_path is 108 bytes on Linux. */
const MAX_SOCKET_PATH = 107;

export interface OsUser {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root: then the cluster runs as the build's unprivileged user. */
export async function clusterUser(): Promise<OsUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', CLUSTER_OS_USER]),
    run('id', ['-g', CLUSTER_OS_USER]),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

export function withoutVariables(prefixes: string[]): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !prefixes.some((prefix) => name.startsWith(prefix))),
  );
}

/** initdb into a side folder, renamed into place when complete, so a killed initdb is never a cluster. */
export async function initCluster(
  pgdata: string,
  user: OsUser | undefined,
  throwaway: boolean,
): Promise<void> {
  if (existsSync(path.join(pgdata, 'PG_VERSION'))) return;
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
export async function clearStalePidFile(pgdata: string): Promise<void> {
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

export function postgresArgs(
  pgdata: string,
  clusterName: string,
  throwaway: boolean,
  extra: Readonly<Record<string, string>> = {},
): string[] {
  const settings = {
    ...POSTGRES_SETTINGS,
    ...(throwaway ? THROWAWAY_SETTINGS : {}),
    ...extra,
    unix_socket_directories: pgdata,
    port: String(SOCKET_PORT),
    // pg_cron (DocumentDB's background jobs) and DocumentDB itself (e.g. createIndexes) connect back
    // to the server over libpq: through the socket too, as there is no TCP listener.
    'cron.host': pgdata,
    'documentdb.localhost_connection_string': `host='${pgdata}'`,
    // In every PostgreSQL process title, so `ps` ties each backend to its data folder.
    cluster_name: clusterName,
  };
  return ['-D', pgdata, ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
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
export async function waitForPostgres(pgdata: string, postgres: Guarded, deadline: number): Promise<void> {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  for (;;) {
    if (hasExited(postgres)) throw new Error('PostgreSQL exited during start-up');
    const lines = (await readFile(pidFile, 'utf8').catch(() => '')).split('\n');
    if (lines[7]?.trim() === 'ready' && (await parentOf(Number(lines[0]))) === postgres.child.pid) return;
    if (Date.now() > deadline) throw new Error('PostgreSQL did not become ready in time');
    await sleep(50);
  }
}

export async function createExtension(pgdata: string): Promise<void> {
  await run(
    path.join(POSTGRES_BIN_DIR, 'psql'),
    [
      `--host=${pgdata}`,
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

export function postgresqlUrl(pgdata: string): string {
  const query = new URLSearchParams({ host: pgdata, port: String(SOCKET_PORT), user: POSTGRES_ROLE });
  return `postgres:///${POSTGRES_DATABASE}?${query}`;
}

/**
 * The cluster's user must be able to reach its folder inside ours: every folder on the way that
 * it cannot pass gets an ACL entry letting that one user through (x only, no listing), rather than
 * opening the folder to everyone (e.g. a mkdtemp folder, or a project under /root).
 */
export async function letClusterUserThrough(dir: string, user: OsUser): Promise<void> {
  for (let current = dir; ; current = path.dirname(current)) {
    const { mode, uid } = await stat(current);
    const passable = uid === user.uid ? (mode & 0o100) !== 0 : (mode & 0o001) !== 0;
    if (!passable) await run('setfacl', ['--modify', `user:${CLUSTER_OS_USER}:x`, current]);
    if (current === path.dirname(current)) return;
  }
}

/** sun_path's limit, checked before PostgreSQL would fail on it less clearly. */
export function checkSocketPath(pgdata: string): void {
  const socket = path.join(pgdata, `.s.PGSQL.${SOCKET_PORT}`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(
      `The data folder's path is too long for PostgreSQL's socket (${socket}); use a shorter DATA_DIR`,
    );
  }
}
