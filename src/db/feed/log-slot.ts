import type pg from 'pg';

/** The lasting slot of a database: made where missing or lost, and marked while it is resynced. */

export interface SlotEvents {
  /** Told when the lasting slot was found lost (invalidated, or gone with a restored backup). */
  onSlotLost?: () => void;
}

/**
 * Lasting slots whose derived state is being rebuilt: a row while a resync runs (or was cut short
 * by a crash: the next holder resyncs again), read with the log's position, so no instance takes
 * the grams as current meanwhile. In PostgreSQL's own schema, outside the published one.
 */
export const RESYNC_TABLE = 'storefront_feed_resync';

export async function ensureResyncTable(pool: pg.Pool): Promise<void> {
  await pool
    .query(`CREATE TABLE IF NOT EXISTS ${RESYNC_TABLE} (slot text PRIMARY KEY)`)
    .catch((error: { code?: string }) => {
      if (error.code !== '23505' && error.code !== '42P07') throw error; // made by another instance meanwhile
    });
}

/**
 * Makes the lasting slot where it is missing, and again where the server invalidated it; says
 * whether what it derives must be resynced first (a new slot, or a resync left unfinished). The
 * resync is marked before the slot is made, so it is never taken as current in between.
 */
export async function prepareLastingSlot(pool: pg.Pool, slot: string, options: SlotEvents): Promise<boolean> {
  const { rows } = await pool.query<{ wal_status: string | null; resyncing: boolean }>(
    `SELECT (SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1) AS wal_status,
            EXISTS (SELECT 1 FROM ${RESYNC_TABLE} WHERE slot = $1) AS resyncing`,
    [slot],
  );
  const { wal_status: status, resyncing } = rows[0]!;
  if (status !== null && status !== 'lost') return resyncing;
  await pool.query(`INSERT INTO ${RESYNC_TABLE} (slot) VALUES ($1) ON CONFLICT DO NOTHING`, [slot]);
  if (status === 'lost') {
    options.onSlotLost?.();
    await pool.query('SELECT pg_drop_replication_slot($1)', [slot]);
  }
  await pool
    .query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot])
    .catch((error: { code?: string }) => {
      if (error.code !== '42710') throw error;
    });
  return true;
}

export async function resynced(pool: pg.Pool, slot: string): Promise<void> {
  await pool.query(`DELETE FROM ${RESYNC_TABLE} WHERE slot = $1`, [slot]);
}
