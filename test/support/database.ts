import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { connectDatabase, ensureIndexes, type Database } from '../../src/db/mongo';

export interface TestDatabase extends Database {
  uri: string;
  dbName: string;
}

/** A fresh, indexed database on the run's shared server; dropped again by close(). */
export async function openTestDatabase(label = 'test'): Promise<TestDatabase> {
  const uri = inject('mongoUri');
  const dbName = `${label.replace(/[^A-Za-z0-9]/g, '_').slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  const database = await connectDatabase({ uri, dbName });
  await ensureIndexes(database.db);
  return {
    ...database,
    uri,
    dbName,
    async close() {
      await database.db.dropDatabase().catch(() => undefined);
      await database.close();
    },
  };
}
