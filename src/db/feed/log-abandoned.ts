import type pg from 'pg';
import { RESYNC_TABLE } from './log-slot';

/**
 * Lasting slots of fleets that are gone. A lasting slot keeps the WAL its reader has not confirmed
 * (up to `max_slot_wal_keep_size`), so one of a database no gateway serves any more would hold
 * disk for ever. Every running instance says, once a minute, that its database's slot is served;
 * a lasting slot (ours by its name) that nobody has served for the given time, and that no
 * connection holds, is dropped. A slot first seen (made by an older gateway) gets its time then.
 */

export const SLOTS_TABLE = 'storefront_feed_slots';

/** A pool or one client. */
type Queryable = Pick<pg.ClientBase, 'query'>;

/** The lasting slots' names (src/db/feed/log.ts: lastingSlotName). */
const LASTING = '^storefront_[0-9a-f]{24}$';

export async function ensureSlotsTable(pool: Queryable): Promise<void> {
  await pool
    .query(
      `CREATE TABLE IF NOT EXISTS ${SLOTS_TABLE} (slot text PRIMARY KEY, served_at timestamptz NOT NULL)`,
    )
    .catch((error: { code?: string }) => {
      if (error.code !== '23505' && error.code !== '42P07') throw error; // made by another instance meanwhile
    });
}

export async function markServed(pool: Queryable, slot: string): Promise<void> {
  await pool.query(
    `INSERT INTO ${SLOTS_TABLE} (slot, served_at) VALUES ($1, now())
       ON CONFLICT (slot) DO UPDATE SET served_at = now()`,
    [slot],
  );
}

/** Drops the lasting slots nobody served for `abandonMs`; returns their names. */
export async function dropAbandonedSlots(pool: Queryable, abandonMs: number): Promise<string[]> {
  await pool.query(
    `INSERT INTO ${SLOTS_TABLE} (slot, served_at)
       SELECT slot_name, now() FROM pg_replication_slots WHERE slot_name ~ $1 AND NOT temporary
       ON CONFLICT (slot) DO NOTHING`,
    [LASTING],
  );
  const { rows } = await pool.query<{ slot: string }>(
    `SELECT f.slot FROM ${SLOTS_TABLE} f JOIN pg_replication_slots s ON s.slot_name = f.slot
      WHERE NOT s.active AND f.served_at < now() - make_interval(secs => $1::double precision / 1000)`,
    [abandonMs],
  );
  // Rows of slots dropped by hand: not kept for ever either.
  await pool.query(
    `DELETE FROM ${SLOTS_TABLE} f WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots s WHERE s.slot_name = f.slot)
       AND f.served_at < now() - make_interval(secs => $1::double precision / 1000)`,
    [abandonMs],
  );
  const dropped: string[] = [];
  for (const { slot } of rows) {
    // Taken by a starting instance meanwhile (55006: active): it is served again.
    const gone = await pool.query('SELECT pg_drop_replication_slot($1)', [slot]).then(
      () => true,
      (error: { code?: string }) => {
        if (error.code !== '55006' && error.code !== '42704') throw error;
        return false;
      },
    );
    await pool.query(`DELETE FROM ${SLOTS_TABLE} WHERE slot = $1`, [slot]);
    await pool.query(`DELETE FROM ${RESYNC_TABLE} WHERE slot = $1`, [slot]);
    if (gone) dropped.push(slot);
  }
  return dropped;
}

/** How often an instance says its slot is served, and looks for abandoned ones. */
const SWEEP_MS = 60_000;

/** Marks `slot` served and drops abandoned ones now and every minute; returns the stop. */
export function sweepAbandonedSlots(
  pool: Queryable,
  slot: string,
  { abandonMs, onDropped, onError }: SweepOptions,
): () => void {
  const sweep = () =>
    markServed(pool, slot)
      .then(() => dropAbandonedSlots(pool, abandonMs))
      .then((dropped) => dropped.forEach(onDropped), onError);
  void sweep();
  const timer = setInterval(() => void sweep(), SWEEP_MS);
  timer.unref();
  return () => clearInterval(timer);
}

export interface SweepOptions {
  /** How long a lasting slot may go unserved before it is dropped. */
  abandonMs: number;
  onDropped: (slot: string) => void;
  onError: (error: unknown) => void;
}
