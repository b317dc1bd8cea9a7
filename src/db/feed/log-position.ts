import type pg from 'pg';
import { type createCommitMarks, type Snapshot, snapshotOf } from './commit-marks';
import { freshCheck } from './fresh-check';
import { RESYNC_TABLE } from './log-slot';
import { type Lsn, lsnOf } from './lsn';
import type { createPositionWaiter } from './position-waiter';

/**
 * Whether the log feed's channels have handed on everything committed before a request: the log's
 * position is read once (shared by the requests that asked while one read was out), then the own
 * channel's handed position is awaited, and the lasting slot's confirmed position polled, each for
 * at most `waitMs`.
 */
/** The lasting slot's confirmed position, or none while its derived state is being resynced. */
const DERIVED = `(SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1
                    AND NOT EXISTS (SELECT 1 FROM ${RESYNC_TABLE} WHERE slot = $1))`;

/**
 * WAL the lasting slot may be behind for a caller of `caughtUp` (the start's wait) to wait for it.
 * Its holder writes a search row in ~1.5 ms (the gram index), and an owner's update of 20,000
 * products is ~300 MB of WAL taking 30 s or more to follow: past this, a wait would run out anyway.
 * Searches do not wait for it: they read the rows it has not written from the products.
 */
const DERIVED_BACKLOG_BYTES = 16n << 20n;

/** The wait of a check made within `waitMs` of one that ran out. */
const SHORT_WAIT_MS = 250;

export function createLogPositions(
  pool: pg.Pool,
  lastingSlot: string,
  waitMs: number,
  own: ReturnType<typeof createPositionWaiter>,
  /** Each channel's, fed by this instance: the lasting slot's only while it holds it. */
  marks: Record<'own' | 'derived', ReturnType<typeof createCommitMarks>>,
) {
  // The snapshot is the statement's, taken before the position is read: every transaction it sees
  // committed ends before that position.
  const target = freshCheck(async () => {
    const { rows } = await pool.query<{ now: string; snapshot: string; derived: string | null }>(
      `SELECT pg_current_wal_insert_lsn()::text AS now, pg_current_snapshot()::text AS snapshot,
              ${DERIVED} AS derived`,
      [lastingSlot],
    );
    const now = lsnOf(rows[0]!.now);
    const snapshot = snapshotOf(rows[0]!.snapshot);
    if (snapshot) for (const channel of [marks.own, marks.derived]) channel.taken(now, snapshot);
    return { now, snapshot, derived: rows[0]!.derived ? lsnOf(rows[0]!.derived) : undefined };
  });
  const derivedSince = freshCheck(async () => {
    const { rows } = await pool.query<{ derived: string | null }>(`SELECT ${DERIVED} AS derived`, [
      lastingSlot,
    ]);
    return rows[0]?.derived ? lsnOf(rows[0].derived) : 0n;
  });

  // Once a wait ran out, the checks of the next moment wait a little only: one request asks several
  // times (its plan, its total, its cache), and its deadline is not a multiple of the wait. Not
  // none: a feed a few milliseconds behind (another database's burst to decode) still catches up.
  let lastTimedOut = 0;
  const patience = () => (Date.now() - lastTimedOut < waitMs ? Math.min(waitMs, SHORT_WAIT_MS) : waitMs);
  const noted = (done: boolean) => {
    if (!done) lastTimedOut = Date.now();
    return done;
  };

  async function derivedReaches(lsn: Lsn, known: Lsn, deadline: number): Promise<boolean> {
    for (let reached = known; ; reached = await derivedSince().catch(() => 0n)) {
      if (reached >= lsn) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  // PostgreSQL out of reach: nothing can be shown current, and the request answers from the
  // documents (whose reads then fail the usual way: a 503, never an error of the feed's).
  const position = () => target().catch(() => undefined);
  /** Whether the own channel has handed on what the request can see: at once by xid, else by position. */
  const ownReaches = async ({ now, snapshot }: { now: Lsn; snapshot?: Snapshot }, wait: number) =>
    (snapshot !== undefined && marks.own.covers(snapshot)) || noted(await own.waitFor(now, wait));
  /**
   * The lasting slot's: at once by xid where this instance handed them on (and no resync runs),
   * not at all when it is far behind, else by polling its confirmed position.
   */
  async function derivedDone(known: { now: Lsn; snapshot?: Snapshot; derived?: Lsn }, wait: number) {
    if (known.derived === undefined) return noted(await derivedReaches(known.now, 0n, Date.now() + wait));
    if (known.snapshot !== undefined && marks.derived.covers(known.snapshot)) return true;
    if (known.now - known.derived > DERIVED_BACKLOG_BYTES) return false;
    return noted(await derivedReaches(known.now, known.derived, Date.now() + wait));
  }

  return {
    async caughtUp(): Promise<{ own: boolean; derived: boolean }> {
      const known = await position();
      if (!known) return { own: false, derived: false };
      const wait = patience();
      const [ownDone, derived] = await Promise.all([ownReaches(known, wait), derivedDone(known, wait)]);
      return { own: ownDone, derived };
    },
    async handedOn(): Promise<boolean> {
      const known = await position();
      return known ? ownReaches(known, patience()) : false;
    },
    /**
     * The lasting slot's confirmed position, read with the log's, once the own channel has handed
     * on everything before it; undefined when it has not (or a resync runs).
     */
    async derivedOnceHandedOn(): Promise<Lsn | undefined> {
      const known = await position();
      if (!known || known.derived === undefined) return undefined;
      return (await ownReaches(known, patience())) ? known.derived : undefined;
    },
  };
}
