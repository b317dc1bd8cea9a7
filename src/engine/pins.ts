import path from 'node:path';

/**
 * What the embedded database is made of and where it lives: FerretDB v2 in front of a PostgreSQL
 * 15 cluster with FerretDB's DocumentDB extension. Every version pin and path is declared here,
 * once; the build (`npm run db:build`) and the launcher both read them.
 */

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The one git-ignored folder for everything project-local: sources, libbson, binary, stamp. */
export const ENGINE_HOME = path.join(PROJECT_ROOT, '.embedded-db');

/** Where the vendored source archives are looked for when no other folder is given. */
export const DEFAULT_SOURCES_DIR = path.resolve(PROJECT_ROOT, '..', 'shared', 'vendor', 'documentdb');

export const POSTGRES_MAJOR = 15;
export const POSTGRES_BIN_DIR = `/usr/lib/postgresql/${POSTGRES_MAJOR}/bin`;

/** The unprivileged OS user the cluster runs as when we are root (PostgreSQL refuses root). */
export const CLUSTER_OS_USER = 'storefront-db';

export const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB/v2';
export const FERRETDB_VERSION = 'v2.5.0';

export function ferretdbBinaryPath(): string {
  return path.join(ENGINE_HOME, 'bin', `ferretdb-${FERRETDB_VERSION}`);
}

/** Debian packages: PostgreSQL 15, the extensions DocumentDB's control file requires, the toolchain. */
export const APT_PACKAGES = [
  `postgresql-${POSTGRES_MAJOR}`,
  `postgresql-server-dev-${POSTGRES_MAJOR}`,
  `postgresql-${POSTGRES_MAJOR}-postgis-3`,
  `postgresql-${POSTGRES_MAJOR}-rum`,
  'libintelrdfpmath-dev',
  'libpcre2-dev',
  'libicu-dev',
  'libkrb5-dev',
  'cmake',
  'pkg-config',
  'build-essential',
  // setfacl: lets the cluster's OS user through the folders above DATA_DIR, and no one else.
  'acl',
] as const;

export interface SourcePin {
  name: 'documentdb' | 'libbson' | 'pg_cron' | 'pgvector';
  /** The archive in the sources folder (made with `git archive`, no enclosing folder). */
  archive: string;
  sha256: string;
  repository: string;
  commit: string;
}

export const SOURCES: Record<SourcePin['name'], SourcePin> = {
  documentdb: {
    name: 'documentdb',
    archive: 'documentdb-beb9d25d98.tar.gz',
    sha256: 'd0926c15e0b960852ab0a486cfdbe46a10cf178bc4dda3b4d9d37b5a13df5f57',
    repository: 'FerretDB/documentdb',
    commit: 'beb9d25d9845477c85559d3293cd1f929cdf2b9c',
  },
  libbson: {
    name: 'libbson',
    archive: 'mongo-c-driver-1.28.0.tar.gz',
    sha256: 'ea730bda9c26aa81f26714301e8ab042925cd80131f2a5513c3949634cf05531',
    repository: 'mongodb/mongo-c-driver',
    commit: 'a463a46c38cb6b552f2da4b3ae63e393dfe0a9a6',
  },
  pg_cron: {
    name: 'pg_cron',
    archive: 'pg_cron-1.6.3.tar.gz',
    sha256: '5fdb39f54448ff4305203dda5f6fdd12d377e16cb2e784d0d579998330972731',
    repository: 'citusdata/pg_cron',
    commit: '9d0576c64edd90fb3d8ac30763296a8106315638',
  },
  pgvector: {
    name: 'pgvector',
    archive: 'pgvector-0.8.0.tar.gz',
    sha256: '6e1dcc706cc6634847ba2888c6631c7844e2dded7f10b9041da05ef8490682dc',
    repository: 'pgvector/pgvector',
    commit: '2627c5ff775ae6d7aef0c430121ccf857842d2f2',
  },
};

export const LIBBSON_VERSION = '1.28.0';

/** The version string FerretDB v2.5.0 checks DocumentDB against (a mismatch only logs a warning). */
export const DOCUMENTDB_EXPECTED_VERSION = '0.106.0 gitref: HEAD sha:beb9d25d98 buildId:0';
