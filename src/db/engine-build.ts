import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import { promisify } from 'node:util';
import {
  APT_PACKAGES,
  CLUSTER_OS_USER,
  DEFAULT_SOURCES_DIR,
  ENGINE_HOME,
  FERRETDB_MODULE,
  FERRETDB_VERSION,
  ferretdbBinaryPath,
  LIBBSON_VERSION,
  POSTGRES_BIN_DIR,
  POSTGRES_MAJOR,
  SOURCES,
  type SourcePin,
} from './engine-pins';

/**
 * Builds the embedded database once: Debian's PostgreSQL 15 and toolchain (apt), libbson 1.28
 * static into a private prefix, pg_cron 1.6.3, pgvector 0.8.0, FerretDB's DocumentDB fork
 * (installed into PostgreSQL's system directories, hence root once), and FerretDB v2.5.0 from the
 * Go module proxy. A stamp of what was built, with its pins, makes the next run a no-op.
 */

const run = promisify(execFile);

const STAMP_FILE = path.join(ENGINE_HOME, 'build.json');
const LOG_DIR = path.join(ENGINE_HOME, 'logs');
const SOURCE_ROOT = path.join(ENGINE_HOME, 'src');
const LIBBSON_PREFIX = path.join(ENGINE_HOME, 'libbson');
const PKG_CONFIG_DIR = path.join(ENGINE_HOME, 'pkgconfig');
const PG_CONFIG = path.join(POSTGRES_BIN_DIR, 'pg_config');
const EXTENSION_DIR = `/usr/share/postgresql/${POSTGRES_MAJOR}/extension`;

export const NEEDS_ROOT_MESSAGE =
  'The embedded database (PostgreSQL 15 + DocumentDB + FerretDB) needs a one-time build as root on Debian/Ubuntu with Go: run `sudo npm run db:build`; on other systems set MONGODB_URI to a MongoDB (or one of FerretDB’s own images).';

export class EngineBuildError extends Error {
  override name = 'EngineBuildError';
}

type Log = (line: string) => void;

interface BuildStep {
  name: string;
  /** What the step's result depends on; a change rebuilds it. */
  pin: string;
  needsRoot: boolean;
  /** Besides the stamp: is the result still there? */
  present: () => boolean | Promise<boolean>;
  build: (context: BuildContext) => Promise<void>;
}

interface BuildContext {
  sourcesDir: string | undefined;
  log: Log;
}

interface Stamp {
  steps: Record<string, string>;
}

async function readStamp(): Promise<Stamp> {
  try {
    return JSON.parse(await readFile(STAMP_FILE, 'utf8')) as Stamp;
  } catch {
    return { steps: {} };
  }
}

async function writeStamp(stamp: Stamp): Promise<void> {
  await mkdir(ENGINE_HOME, { recursive: true });
  await writeFile(`${STAMP_FILE}.partial`, `${JSON.stringify(stamp, null, 2)}\n`);
  await rename(`${STAMP_FILE}.partial`, STAMP_FILE);
}

/** Runs a build command with its output in a per-step log; on failure the log's tail is the error. */
async function sh(
  step: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  await mkdir(LOG_DIR, { recursive: true });
  const logFile = path.join(LOG_DIR, `${step}.log`);
  const out = createWriteStream(logFile, { flags: 'a' });
  await new Promise<void>((resolve) => out.once('open', () => resolve()));
  out.write(`$ ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', out, out],
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  await new Promise<void>((resolve) => out.end(resolve));
  if (code !== 0) {
    const tail = (await readFile(logFile, 'utf8')).trim().split('\n').slice(-15).join('\n');
    throw new EngineBuildError(`${step}: \`${command} ${args.join(' ')}\` failed (${logFile}):\n${tail}`);
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** The pinned source, unpacked into a fresh folder: from the local archive folder, else from GitHub. */
async function unpackSource(pin: SourcePin, { sourcesDir, log }: BuildContext): Promise<string> {
  const target = path.join(SOURCE_ROOT, pin.name);
  await rm(target, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  if (sourcesDir) {
    const archive = path.join(sourcesDir, pin.archive);
    const sums = await readFile(path.join(sourcesDir, 'SHA256SUMS'), 'utf8');
    const listed = sums.split('\n').find((line) => line.trim().endsWith(` ${pin.archive}`));
    const actual = await sha256Of(archive);
    if (listed?.split(/\s+/)[0] !== pin.sha256 || actual !== pin.sha256) {
      throw new EngineBuildError(`${archive}: SHA-256 ${actual} is not the pinned ${pin.sha256}`);
    }
    await run('tar', ['-xzf', archive, '-C', target]);
    return target;
  }
  const url = `https://codeload.github.com/${pin.repository}/tar.gz/${pin.commit}`;
  log(`    downloading ${url}`);
  const response = await fetch(url, { signal: AbortSignal.timeout(5 * 60_000) });
  if (!response.ok || !response.body) throw new EngineBuildError(`${url}: HTTP ${response.status}`);
  const archive = path.join(SOURCE_ROOT, `${pin.name}.tar.gz`);
  await pipeline(Readable.fromWeb(response.body as NodeWebStream), createWriteStream(archive));
  await run('tar', ['-xzf', archive, '-C', target, '--strip-components=1']);
  await rm(archive);
  return target;
}

function buildEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${POSTGRES_BIN_DIR}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    PKG_CONFIG_PATH: [
      path.join(LIBBSON_PREFIX, 'lib', 'pkgconfig'),
      path.join(LIBBSON_PREFIX, 'lib', 'x86_64-linux-gnu', 'pkgconfig'),
      PKG_CONFIG_DIR,
    ].join(':'),
  };
}

async function aptMissing(): Promise<string[]> {
  const missing: string[] = [];
  for (const name of APT_PACKAGES) {
    const installed = await run('dpkg-query', ['-W', '-f=${Status}', name]).then(
      ({ stdout }) => stdout.includes('install ok installed'),
      () => false,
    );
    if (!installed) missing.push(name);
  }
  return missing;
}

const steps: BuildStep[] = [
  {
    name: 'apt',
    pin: APT_PACKAGES.join(' '),
    needsRoot: true,
    present: async () => (await aptMissing()).length === 0,
    async build() {
      const missing = await aptMissing();
      if (missing.length === 0) return;
      // Debian's postgresql-common would create and start a "main" cluster on port 5432: we run
      // our own cluster under DATA_DIR, so no system cluster is created.
      if (!existsSync('/etc/postgresql-common/createcluster.conf')) {
        await mkdir('/etc/postgresql-common', { recursive: true });
        await writeFile('/etc/postgresql-common/createcluster.conf', 'create_main_cluster = false\n');
      }
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      await sh('apt', 'apt-get', ['update', '-qq'], { env });
      await sh(
        'apt',
        'apt-get',
        [
          'install',
          '-y',
          '-qq',
          '--no-install-recommends',
          '-o',
          'Dpkg::Options::=--force-confold',
          ...missing,
        ],
        { env },
      );
    },
  },
  {
    name: 'os-user',
    pin: CLUSTER_OS_USER,
    needsRoot: true,
    present: () => clusterUserExists(),
    async build() {
      if (await clusterUserExists()) return;
      await sh('os-user', 'useradd', [
        '--system',
        '--no-create-home',
        '--home-dir',
        '/nonexistent',
        '--shell',
        '/usr/sbin/nologin',
        CLUSTER_OS_USER,
      ]);
    },
  },
  {
    name: 'libbson',
    pin: `${SOURCES.libbson.commit} static -fPIC`,
    needsRoot: false,
    present: () => existsSync(path.join(LIBBSON_PREFIX, 'lib', 'pkgconfig', 'libbson-static-1.0.pc')),
    async build(context) {
      const source = await unpackSource(SOURCES.libbson, context);
      const buildDir = path.join(source, 'cmake-build');
      await rm(LIBBSON_PREFIX, { recursive: true, force: true });
      await sh('libbson', 'cmake', [
        '-S',
        source,
        '-B',
        buildDir,
        `-DBUILD_VERSION=${LIBBSON_VERSION}`,
        '-DENABLE_MONGOC=OFF',
        '-DENABLE_STATIC=ON',
        '-DENABLE_TESTS=OFF',
        '-DENABLE_EXAMPLES=OFF',
        '-DENABLE_MAN_PAGES=OFF',
        '-DENABLE_HTML_DOCS=OFF',
        '-DCMAKE_BUILD_TYPE=Release',
        '-DCMAKE_C_FLAGS=-fPIC',
        '-DCMAKE_INSTALL_LIBDIR=lib',
        `-DCMAKE_INSTALL_PREFIX=${LIBBSON_PREFIX}`,
      ]);
      await sh('libbson', 'cmake', ['--build', buildDir, '--parallel', '2', '--target', 'install']);
    },
  },
  {
    name: 'intelmathlib',
    pin: 'libbidgcc000',
    needsRoot: false,
    present: () => existsSync(path.join(PKG_CONFIG_DIR, 'intelmathlib.pc')),
    async build() {
      // DocumentDB looks the Intel decimal library up as `intelmathlib`; Debian ships the library
      // (libbidgcc000.a, the variant it wants) without a pkg-config file.
      await mkdir(PKG_CONFIG_DIR, { recursive: true });
      await writeFile(
        path.join(PKG_CONFIG_DIR, 'intelmathlib.pc'),
        [
          'Name: intelmathlib',
          'Description: Intel Decimal Floating-Point Math Library (Debian libintelrdfpmath-dev)',
          'Version: 2.0',
          'Cflags:',
          'Libs: -lbidgcc000',
          '',
        ].join('\n'),
      );
    },
  },
  {
    name: 'pg_cron',
    pin: SOURCES.pg_cron.commit,
    needsRoot: true,
    present: () => existsSync(path.join(EXTENSION_DIR, 'pg_cron.control')),
    async build(context) {
      const source = await unpackSource(SOURCES.pg_cron, context);
      await sh('pg_cron', 'make', ['-j2', `PG_CONFIG=${PG_CONFIG}`], { cwd: source, env: buildEnv() });
      await sh('pg_cron', 'make', ['install', `PG_CONFIG=${PG_CONFIG}`], { cwd: source, env: buildEnv() });
    },
  },
  {
    name: 'pgvector',
    pin: SOURCES.pgvector.commit,
    needsRoot: true,
    present: () => existsSync(path.join(EXTENSION_DIR, 'vector.control')),
    async build(context) {
      const source = await unpackSource(SOURCES.pgvector, context);
      // OPTFLAGS="": the default -march=native would tie the library to this CPU.
      const args = [`PG_CONFIG=${PG_CONFIG}`, 'OPTFLAGS='];
      await sh('pgvector', 'make', ['-j2', ...args], { cwd: source, env: buildEnv() });
      await sh('pgvector', 'make', ['install', ...args], { cwd: source, env: buildEnv() });
    },
  },
  {
    name: 'documentdb',
    pin: SOURCES.documentdb.commit,
    needsRoot: true,
    present: () => existsSync(path.join(EXTENSION_DIR, 'documentdb.control')),
    async build(context) {
      const source = await unpackSource(SOURCES.documentdb, context);
      // The `internal` (distributed, Citus) part is left out, as upstream's Debian packaging does.
      const makefile = path.join(source, 'Makefile');
      const lines = (await readFile(makefile, 'utf8')).split('\n');
      await writeFile(makefile, lines.filter((line) => !line.includes('internal')).join('\n'));
      // The version string FerretDB checks is "HEAD sha:<10 hex digits>", what a git checkout of
      // the tag gives; from an archive, upstream's CI variables give it, but cut to 7 digits.
      const versionScript = path.join(source, 'scripts', 'generate_extension_version.sh');
      const script = await readFile(versionScript, 'utf8');
      await writeFile(
        versionScript,
        script.replace('${BUILD_SOURCEVERSION:0:7}', '${BUILD_SOURCEVERSION:0:10}'),
      );
      const env = {
        ...buildEnv(),
        BUILD_SOURCEBRANCH: 'refs/heads/HEAD',
        BUILD_SOURCEVERSION: SOURCES.documentdb.commit,
        BUILD_BUILDID: '0',
      };
      // Any existing file stands in for the git index the version script looks for (the archive
      // is no git checkout; without this it would read the enclosing project's repository).
      const args = [`PG_CONFIG=${PG_CONFIG}`, `GIT_INDEX_FILE=${makefile}`];
      await sh('documentdb', 'make', ['-j2', ...args], { cwd: source, env });
      await sh('documentdb', 'make', ['install', ...args], { cwd: source, env });
    },
  },
  {
    name: 'ferretdb',
    pin: `${FERRETDB_MODULE}@${FERRETDB_VERSION}`,
    needsRoot: false,
    present: () => existsSync(ferretdbBinaryPath()),
    build: buildFerretdb,
  },
];

async function clusterUserExists(): Promise<boolean> {
  return run('id', ['-u', CLUSTER_OS_USER]).then(
    () => true,
    () => false,
  );
}

function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' };
}

interface ModuleDownload {
  Dir: string;
  Origin?: { Hash?: string };
}

/**
 * Not `go install …@v2.5.0`: the module proxy here refuses the module's version list (which `go
 * install` reads), and the module zip lacks the generated build/version/version.txt the binary
 * needs. So: download the exact module (checksum-verified), copy it, stamp the version, build it
 * with its own go.sum.
 */
async function buildFerretdb({ log }: BuildContext): Promise<void> {
  try {
    await run('go', ['version'], { timeout: 30_000 });
  } catch {
    throw new EngineBuildError(
      'FerretDB is built with Go, and `go` was not found: install Go ≥ 1.24 (https://go.dev/dl/).',
    );
  }
  const { stdout } = await run('go', ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], {
    env: goEnv(),
    timeout: 10 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const download = JSON.parse(stdout) as ModuleDownload;
  const source = path.join(SOURCE_ROOT, `FerretDB@${FERRETDB_VERSION}`);
  await rm(source, { recursive: true, force: true });
  await cp(download.Dir, source, { recursive: true });
  await run('chmod', ['-R', 'u+w', source]);
  const versionDir = path.join(source, 'build', 'version');
  await writeFile(path.join(versionDir, 'version.txt'), `${FERRETDB_VERSION}\n`);
  if (download.Origin?.Hash)
    await writeFile(path.join(versionDir, 'commit.txt'), `${download.Origin.Hash}\n`);
  // gomaxprocs.go is `//go:build !go1.25` (Go 1.25 sets GOMAXPROCS from the container's quota by
  // itself), yet main.go calls it unconditionally: newer Go needs the no-op.
  await writeFile(
    path.join(source, 'cmd', 'ferretdb', 'gomaxprocs_go125.go'),
    '//go:build go1.25\n\npackage main\n\nimport "log/slog"\n\nfunc setGOMAXPROCS(*slog.Logger) {}\n',
  );
  log('    go build (the first build downloads ~80 MB of Go modules)');
  const binary = ferretdbBinaryPath();
  await mkdir(path.dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  await sh('ferretdb', 'go', ['build', '-trimpath', '-o', partial, './cmd/ferretdb'], {
    cwd: source,
    env: goEnv(),
  });
  await chmod(partial, 0o755);
  await rename(partial, binary);
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** True when every step is stamped with its current pin and its result is still in place. */
async function pendingSteps(): Promise<BuildStep[]> {
  const stamp = await readStamp();
  const pending: BuildStep[] = [];
  for (const step of steps) {
    if (step.name === 'os-user' && !isRoot() && stamp.steps[step.name] === undefined) continue;
    if (stamp.steps[step.name] === step.pin && (await step.present())) continue;
    pending.push(step);
  }
  return pending;
}

export interface BuildOptions {
  /** Folder with the pinned archives and their SHA256SUMS; default ../shared/vendor/documentdb when present, else download. */
  sourcesDir?: string;
  log?: Log;
}

/**
 * Builds whatever is missing or out of date; a no-op when the stamp is current. Without root,
 * when a step needs root, it throws NEEDS_ROOT_MESSAGE.
 */
export async function ensureEmbeddedEngine({
  sourcesDir,
  log = (line) => console.error(line),
}: BuildOptions = {}): Promise<'built' | 'current'> {
  const pending = await pendingSteps();
  if (pending.length === 0) return 'current';
  if (!isRoot() && pending.some((step) => step.needsRoot)) throw new EngineBuildError(NEEDS_ROOT_MESSAGE);
  const localSources =
    sourcesDir ??
    (existsSync(path.join(DEFAULT_SOURCES_DIR, 'SHA256SUMS')) ? DEFAULT_SOURCES_DIR : undefined);
  log(
    `Building the embedded database (${pending.map((step) => step.name).join(', ')}) from ${localSources ?? 'GitHub'}; logs in ${LOG_DIR}`,
  );
  const started = Date.now();
  const stamp = await readStamp();
  for (const [index, step] of pending.entries()) {
    const stepStarted = Date.now();
    log(`  ${index + 1}/${pending.length} ${step.name}…`);
    await step.build({ sourcesDir: localSources, log });
    stamp.steps[step.name] = step.pin;
    await writeStamp(stamp);
    log(`  ${index + 1}/${pending.length} ${step.name} done in ${seconds(Date.now() - stepStarted)}`);
  }
  log(`Embedded database built in ${seconds(Date.now() - started)}.`);
  return 'built';
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
