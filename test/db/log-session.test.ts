import pg from 'pg';
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLogSession, type LogSession, type LogTransaction } from '../../src/db/feed/log-session';
import { LOG_PUBLICATION } from '../../src/db/feed/log';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * A bulk write in one transaction is handed on a run at a time as it arrives, not held whole until
 * its end (20,000 documents with their before-images were ~80 MB in memory): every run holds at
 * most 1,000 changes, and only the last carries the transaction's position.
 */

const COUNT = 2_500;
let database: TestDatabase;
let session: LogSession | undefined;
const runs: LogTransaction[] = [];

beforeAll(async () => {
  database = await openTestDatabase('log_session');
  const products = database.db.collection('products');
  await products.insertMany(
    Array.from({ length: COUNT }, (_, n) => ({
      _id: n + 1,
      name: `bulk ${n}`,
      variant: { id: n + 1 },
    })) as never[],
  );
  const sql = new pg.Client({ connectionString: database.postgresUrl });
  await sql.connect();
  const { rows } = await sql.query<{ id: string }>(
    `SELECT collection_id::text AS id FROM documentdb_api_catalog.collections
      WHERE database_name = $1 AND collection_name = 'products'`,
    [database.dbName],
  );
  await sql.query(`ALTER TABLE documentdb_data.documents_${rows[0]!.id} REPLICA IDENTITY FULL`);
  await sql.query(
    `DO $$ BEGIN CREATE PUBLICATION ${LOG_PUBLICATION} FOR TABLES IN SCHEMA documentdb_data;
       EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
  );
  await sql.end();
  const table = `documents_${rows[0]!.id}`;
  session = await openLogSession(
    database.postgresUrl,
    {
      name: `log_session_test_${process.pid}`,
      publication: LOG_PUBLICATION,
      applicationName: 'log-session test',
      temporary: true,
    },
    {
      onTransaction: async (transaction) => {
        runs.push(transaction);
        // A slow reader: what arrives meanwhile waits in the socket, not in memory.
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
      onProgress: () => undefined,
      onClose: () => undefined,
      keeps: (name) => name === table,
    },
  );
});

afterAll(async () => {
  await session?.close();
  await database?.close();
});

describe('a transaction of many documents', () => {
  it('is handed on in runs of at most 1,000 changes, and only its last part carries its position', async () => {
    await database.db
      .collection('products')
      .updateMany({} as Document, { $set: { name: 'renamed in one transaction' } });
    const deadline = Date.now() + 20_000;
    const changes = () => runs.reduce((sum, run) => sum + run.changes.length, 0);
    while (changes() < COUNT && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(changes()).toBe(COUNT);
    expect(Math.max(...runs.map((run) => run.changes.length))).toBeLessThanOrEqual(1_000);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    // Other tests' transactions (the cluster is shared) may come before it, in the same runs: no
    // run before its last part carries a position at or past its commit.
    const carrying = runs.filter((run) => run.changes.length > 0);
    const commit = carrying.at(-1)!.endLsn;
    expect(commit).toBeGreaterThan(0n);
    expect(carrying.slice(0, -1).every((run) => run.endLsn < commit)).toBe(true);
    expect(runs.every((run) => run.changes.every((change) => change.before && change.after))).toBe(true);
  });
});
