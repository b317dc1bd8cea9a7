import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCommitMarks, snapshotOf } from '../../src/db/feed/commit-marks';
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
  pool.on('error', () => undefined);
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

async function insertPosition() {
  const { rows } = await pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  return lsnOf(rows[0]!.lsn);
}

/**
 * Asks `current` after marking handed on every transaction committed so far but `pending`, as a
 * channel does with the other test files' writes to this shared cluster; tries a few times, since
 * one may commit between the two reads.
 */
function currentWhenOthersHanded(
  current: () => Promise<boolean>,
  ...channels: ReturnType<typeof createCommitMarks>[]
) {
  return async (pending: number[]) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const { rows } = await pool.query<{ snapshot: string }>(
        'SELECT pg_current_snapshot()::text AS snapshot',
      );
      const snapshot = snapshotOf(rows[0]!.snapshot)!;
      const others: number[] = [];
      for (let xid = snapshot.xmax - 2_000n; xid < snapshot.xmax; xid++) {
        const short = Number(xid & 0xffffffffn);
        if (xid > 2n && !snapshot.inProgress.has(xid) && !pending.includes(short)) others.push(short);
      }
      for (const channel of channels) channel.handed(others);
      if (await current()) return true;
    }
    return false;
  };
}

describe('a request against the log feed by snapshot', () => {
  it('waits for no transaction still open, and for every one committed until it is handed on', async () => {
    const own = createPositionWaiter();
    const marks = { own: createCommitMarks(), derived: createCommitMarks() };
    const positions = createLogPositions(pool, 'no_such_slot', WAIT_MS, own, marks);
    const current = currentWhenOthersHanded(positions.handedOn, marks.own);

    // No mark yet: the channel never reaches the position, so the request is not current.
    expect(await positions.handedOn()).toBe(false);
    // The channel reaches the position read with a request's snapshot: that snapshot is the mark.
    await positions.handedOn();
    const reached = await insertPosition();
    own.reached(reached);
    marks.own.reached(reached);

    const open = await pool.connect();
    try {
      await open.query('BEGIN');
      const { rows } = await open.query<{ xid: string }>(
        `INSERT INTO ${table} SELECT generate_series(1, 20000) RETURNING pg_current_xact_id()::text AS xid`,
      );
      const openXid = Number(rows[0]!.xid) >>> 0;
      // WAL past the channel's position, but nothing of it is visible: no wait.
      expect(await current([])).toBe(true);

      const committed = await committedWrite();
      expect(await current([committed])).toBe(false);
      marks.own.handed([committed]);
      expect(await current([])).toBe(true);

      await open.query('COMMIT');
      expect(await current([openXid])).toBe(false);
      marks.own.handed([openXid]);
      expect(await current([])).toBe(true);
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
    const reached = await insertPosition();
    for (const channel of [marks.own, marks.derived]) channel.reached(reached);
    await committedWrite();
    // Every commit handed on by both channels: the own channel is covered; the lasting slot does
    // not exist, so it is not.
    const caughtUp = async () => (await positions.caughtUp()).own;
    expect(await currentWhenOthersHanded(caughtUp, marks.own, marks.derived)([])).toBe(true);
    expect((await positions.caughtUp()).derived).toBe(false);
  });

  it('waits for no channel inside a transaction handed on in parts: the request counts at once', async () => {
    const own = createPositionWaiter();
    const waiting = own.waitFor(1n << 60n, 60_000);
    own.handingParts(true);
    expect(await waiting).toBe(false);
    expect(await own.waitFor(1n << 60n, 60_000)).toBe(false);
    own.handingParts(false);
    own.reached(1n << 60n);
    expect(await own.waitFor(1n << 60n, 60_000)).toBe(true);
  });

  it('does not wait for a lasting slot far behind (a bulk update to follow): the search scans at once', async () => {
    const holder = await pool.connect();
    const slot = `commit_marks_slot_${process.pid}`;
    try {
      await holder.query(`SELECT pg_create_logical_replication_slot($1, 'test_decoding', true)`, [slot]);
      // 20 MB of WAL the slot has not confirmed.
      for (let n = 0; n < 20; n++)
        await holder.query(`SELECT pg_logical_emit_message(false, 'commit-marks', repeat('x', 1048576))`);
      const own = createPositionWaiter();
      own.reached(1n << 60n);
      const positions = createLogPositions(pool, slot, 60_000, own, {
        own: createCommitMarks(),
        derived: createCommitMarks(),
      });
      // A wait would outlast the test's own timeout.
      expect(await positions.caughtUp()).toEqual({ own: true, derived: false });
    } finally {
      holder.release();
    }
  });
});
