import type pg from 'pg';

/**
 * Which DocumentDB table holds which collection (`documentdb_api_catalog.collections`), and the
 * followed tables' replica identity: FULL, so the log carries each changed document as it was
 * before the change as well as after (what a total or a cached filter was counted from).
 */

export interface CollectionName {
  database: string;
  collection: string;
}

export interface LogCatalog {
  /** The collection of a table, read again from the catalogue once for a table it does not know. */
  collectionOf(table: string): Promise<CollectionName | undefined>;
  /** False only for a table known to hold another database's or an unfollowed collection. */
  mayFollow(table: string): boolean;
  /** Gives the followed collections' tables a full replica identity (those that exist now). */
  prepare(): Promise<void>;
}

const tableOf = (collectionId: number | string) => `documents_${collectionId}`;

export function createLogCatalog(pool: pg.Pool, database: string, followed: readonly string[]): LogCatalog {
  let tables = new Map<string, CollectionName>();
  let reading: Promise<void> | undefined;
  const fullIdentity = new Set<string>();

  async function read(): Promise<void> {
    const { rows } = await pool.query<{
      collection_id: string;
      database_name: string;
      collection_name: string;
    }>('SELECT collection_id, database_name, collection_name FROM documentdb_api_catalog.collections');
    tables = new Map(
      rows.map((row) => [
        tableOf(row.collection_id),
        { database: row.database_name, collection: row.collection_name },
      ]),
    );
    for (const [table, name] of tables) {
      if (name.database === database && followed.includes(name.collection)) await identifyFully(table);
    }
  }

  async function identifyFully(table: string): Promise<void> {
    if (fullIdentity.has(table)) return;
    const { rows } = await pool.query<{ relreplident: string }>(
      `SELECT relreplident FROM pg_class WHERE oid = to_regclass($1)`,
      [`documentdb_data.${table}`],
    );
    // The table name comes from the catalogue (documents_<number>), never from a user.
    if (rows[0] && rows[0].relreplident !== 'f')
      await pool.query(`ALTER TABLE documentdb_data.${table} REPLICA IDENTITY FULL`);
    fullIdentity.add(table);
  }

  const reread = () => {
    reading ??= read().finally(() => (reading = undefined));
    return reading;
  };

  return {
    async collectionOf(table) {
      if (!tables.has(table)) await reread();
      return tables.get(table);
    },
    prepare: reread,
    mayFollow(table) {
      const name = tables.get(table);
      return !name || (name.database === database && followed.includes(name.collection));
    },
  };
}
