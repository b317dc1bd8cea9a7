import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  buildEnv,
  EXTENSION_DIR,
  LIBBSON_PREFIX,
  PG_CONFIG,
  PKG_CONFIG_DIR,
  run,
  sh,
  unpackSource,
  type BuildStep,
} from './build-tools';
import { buildFerretdb } from './ferretdb-build';
import {
  APT_PACKAGES,
  CLUSTER_OS_USER,
  FERRETDB_MODULE,
  FERRETDB_VERSION,
  ferretdbBinaryPath,
  LIBBSON_VERSION,
  SOURCES,
} from './pins';

/** The build, step by step, in order: each with its pin, whether it needs root, and how to check it. */

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

export const BUILD_STEPS: readonly BuildStep[] = [
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
