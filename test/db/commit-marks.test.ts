import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCommitMarks } from '../../src/db/feed/commit-marks';
import { createLogPositions } from '../../src/db/feed/log-position';
import { ensureResyncTable } from '../../src/db/feed/log-slot';
import { lsnOf } from '../../src/db/feed/lsn';
import { createPositionWaiter } from '../../src/db/feed/position-waiter';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * Whether a request must wait for the log feed, decided by the database's own snapshots: a
 * transaction still open (an owner's bulk update writing hundreds of MB of WAL) is not waited
 * for; one committed since the channel's last mark is, until the channel has handed it on. The
 * channel here is a position that never moves by itself, so every "true" is the snapshot's doing.
 */

const WAIT_MS = 200;
let database: TestDatabase;
let pool: pg.Pool;
const table = `commit_marks_${process.pid}`;

beforeAll(async () => {
  database = await openTestDatabase('commit_marks');
  pool = new pg.Pool({ connectionString: database.postgresUrl, max: 4 });
  await pool.query(`CREATE TABLE ${table} (n int)`);
  await ensureResyncTable(pool);
});

afterAll(async () => {
  await pool?.query(`DROP TABLE IF EXISTS ${table}`);
  await pool?.end();
  await database?.close();
});

async function committedWrite(): Promise<number> {
  const { rows } = await pool.query<{ xid: string }>(
    `INSERT INTO ${table} VALUES (1) RETURNING pg_current_xact_id()::text AS xid`,
  );
  return Number(rows[0]!.xid) >>> 0;
}

describe('a request against the log feed by snapshot', () => {
  it('waits for no transaction still open, and for every one committed until it is handed on', async () => {
    const own = createPositionWaiter();
    const marks = { own: createCommitMarks(), derived: createCommitMarks() };
    const positions = createLogPositions(pool, 'no_such_slot', WAIT_MS, own, marks);

    // No mark yet: the channel never reaches the position, so the request is not current.
    expect(await positions.handedOn()).toBe(false);
    // The channel reaches the position read with a request's snapshot: that snapshot becomes the
    // mark. (Done again before each check: the cluster's own background jobs commit now and then.)
    const markNow = async () => {
      await positions.handedOn();
      const { rows } = await pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
      own.reached(lsnOf(rows[0]!.lsn));
      marks.own.reached(lsnOf(rows[0]!.lsn));
    };

    const open = await pool.connect();
    try {
      await open.query('BEGIN');
      const { rows: inOpen } = await open.query<{ xid: string }>(
        `INSERT INTO ${table} SELECT generate_series(1, 20000) RETURNING pg_current_xact_id()::text AS xid`,
      );
      const openXid = Number(inOpen[0]!.xid) >>> 0;
      await markNow();
      // More WAL past the channel's position, but nothing of it is visible: no wait.
      await open.query(`INSERT INTO ${table} SELECT generate_series(1, 20000)`);
      expect(await positions.handedOn()).toBe(true);

      await markNow();
      const committed = await committedWrite();
      expect(await positions.handedOn()).toBe(false);
      marks.own.handed([committed]);
      expect(await positions.handedOn()).toBe(true);

      await open.query('COMMIT');
      expect(await positions.handedOn()).toBe(false);
      marks.own.handed([openXid]);
      expect(await positions.handedOn()).toBe(true);
    } finally {
      await open.query('ROLLBACK').catch(() => undefined);
      open.release();
    }
  });

  it('never trusts a snapshot for the lasting slot while its derived state is resynced or unknown', async () => {
    const own = createPositionWaiter();
    const marks = { own: createCommitMarks(), derived: createCommitMarks() };
    const positions = createLogPositions(pool, 'no_such_slot', WAIT_MS, own, marks);
    await positions.caughtUp();
    const { rows } = await pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    for (const channel of [marks.own, marks.derived]) channel.reached(lsnOf(rows[0]!.lsn));
    own.reached(lsnOf(rows[0]!.lsn));
    // The own channel is covered by its mark; the lasting slot does not exist, so it is not.
    expect(await positions.caughtUp()).toEqual({ own: true, derived: false });
  });
});
