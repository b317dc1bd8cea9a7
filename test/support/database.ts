import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import pg from 'pg';
import { lastingSlotName } from '../../src/db/feed/log';
import { connectDatabase, ensureIndexes, type Database } from '../../src/db/mongo';

export interface TestDatabase extends Database {
  uri: string;
  dbName: string;
  /** The PostgreSQL whose log a server on this database follows ('' where there is none). */
  postgresUrl: string;
}

/** The database's lasting log slot, once no server holds it: a dropped database's would keep WAL. */
async function dropLastingSlot(postgresUrl: string, dbName: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query(
      'SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active',
      [lastingSlotName(dbName)],
    );
  } catch {
    // Best effort: a slot still held is dropped by nobody, and bounded by max_slot_wal_keep_size.
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh, indexed database on the run's shared server; dropped again by close(). */
export async function openTestDatabase(label = 'test'): Promise<TestDatabase> {
  const uri = inject('mongoUri');
  const dbName = `${label.replace(/[^A-Za-z0-9]/g, '_').slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  const database = await connectDatabase({ uri, dbName });
  await ensureIndexes(database.db);
  const postgresUrl = inject('postgresUrl');
  return {
    ...database,
    uri,
    dbName,
    postgresUrl,
    async close() {
      await database.db.dropDatabase().catch(() => undefined);
      await database.close();
      if (postgresUrl) await dropLastingSlot(postgresUrl, dbName);
    },
  };
}
