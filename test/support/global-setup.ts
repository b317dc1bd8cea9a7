import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/engine';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
    /** The embedded database's PostgreSQL, whose log the servers under test follow; '' on MONGODB_URI. */
    postgresUrl: string;
  }
}

let database: EmbeddedDatabase | undefined;
let dataDir: string | undefined;

/** One embedded database for the whole run, a throw-away cluster; each test file uses its own database. */
export async function setup(project: TestProject): Promise<void> {
  if (process.env.MONGODB_URI) {
    project.provide('mongoUri', process.env.MONGODB_URI);
    project.provide('postgresUrl', process.env.CHANGE_FEED_POSTGRES_URL ?? '');
    return;
  }
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-test-db-'));
  database = await startEmbeddedDatabase({ dataDir, throwaway: true, log: (line) => console.log(line) });
  project.provide('mongoUri', database.uri);
  project.provide('postgresUrl', database.postgresUrl);
}

export async function teardown(): Promise<void> {
  await database?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
