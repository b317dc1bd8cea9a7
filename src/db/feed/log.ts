import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { BSON, type Document } from 'mongodb';
import { freshCheck } from '../fresh-check';
import { createLogCatalog } from './log-catalog';
import { openLogSession, type LogSession, type LogTransaction, type RowChange } from './log-session';
import { type Lsn, lsnOf } from './lsn';
import { createPositionWaiter } from './position-waiter';

/**
 * The change feed read from PostgreSQL's write-ahead log (DocumentDB behind FerretDB): every
 * committed insert, update and delete of the followed collections, whoever wrote it and whatever
 * its `updated_at`, in commit order, with the document before and after. Two channels:
 *
 * - `own`: every instance's temporary slot, made at start and gone with its connection, feeding
 *   what the instance keeps in memory (caches, kept totals, live subscriptions);
 * - `derived`: the fleet's one lasting slot, held by one instance at a time (a slot streams to one
 *   connection; the others try again every few seconds, so a dead holder's place is taken within
 *   seconds), feeding what is kept in the database (the search grams) once for the whole fleet.
 *   It resumes from its confirmed position after a restart; where it is new or was lost (the WAL it
 *   needed passed `max_slot_wal_keep_size`), `onResync` rebuilds what is derived first.
 */

export type LogChannel = 'own' | 'derived';

export interface LogChange {
  _id: unknown;
  before?: Document;
  /** Absent for a deletion. */
  after?: Document;
}

/** `gap`: changes may have been missed (a channel opened again): drop what was derived from the whole collection. */
export type LogListener = (changes: LogChange[], gap?: boolean) => Promise<void>;

export interface LogSourceOptions {
  postgresUrl: string;
  dbName: string;
  collections: readonly string[];
  /** How long a request waits for the feed to hand on what was committed before it (ms). */
  waitMs: number;
  /** Rebuilds what the derived channel keeps, before a new or lost lasting slot streams. */
  onResync?: () => Promise<void>;
  /** Told of each failure; the channel that failed opens again. */
  onError: (error: unknown, channel: LogChannel) => void;
  /** Told when the lasting slot was found lost (invalidated, or gone with a restored backup). */
  onSlotLost?: () => void;
}

export interface LogSource {
  follow(collection: string, channel: LogChannel, listener: LogListener): void;
  /** Whether each channel has handed on everything committed before the call (waiting up to waitMs). */
  caughtUp(): Promise<Record<LogChannel, boolean>>;
  /** The own channel alone: whether it has handed on everything committed before the call. */
  handedOn(): Promise<boolean>;
  /** Whether this instance holds the lasting slot. */
  leading(): boolean;
  lagSeconds(): number;
  close(): Promise<void>;
}

interface OpenChannel {
  session: LogSession;
  /** Settles when the session ends, with the error that ended it. */
  closed: Promise<Error | undefined>;
}

export const LOG_PUBLICATION = 'storefront_feed';
const RETRY_MS = 2_000;

/** The lasting slot of a database: one per database the gateway serves, whatever the fleet. */
export function lastingSlotName(dbName: string): string {
  return `storefront_${createHash('sha256').update(dbName).digest('hex').slice(0, 24)}`;
}

export async function openLogSource(options: LogSourceOptions): Promise<LogSource> {
  const pool = new pg.Pool({ connectionString: options.postgresUrl, max: 2 });
  pool.on('error', () => undefined);
  const catalog = createLogCatalog(pool, options.dbName, options.collections);
  await ensurePublication(pool);
  await catalog.prepare();
  const lastingSlot = lastingSlotName(options.dbName);
  const listeners: Record<LogChannel, Map<string, LogListener[]>> = { own: new Map(), derived: new Map() };
  const own = createPositionWaiter();
  let stopped = false;
  let lastCaughtUp = Date.now();

  async function hand(channel: LogChannel, transaction: LogTransaction): Promise<void> {
    const byCollection = new Map<string, Map<string, LogChange>>();
    for (const change of transaction.changes) {
      const name = await catalog.collectionOf(change.table);
      if (name?.database !== options.dbName || !listeners[channel].has(name.collection)) continue;
      const changes = byCollection.get(name.collection) ?? new Map<string, LogChange>();
      merge(changes, decoded(change));
      byCollection.set(name.collection, changes);
    }
    for (const [collection, changes] of byCollection)
      for (const listener of listeners[channel].get(collection) ?? []) await listener([...changes.values()]);
  }

  const ownChannel = keepOpen('own', () =>
    openChannel(
      { name: `storefront_own_${randomBytes(8).toString('hex')}`, temporary: true },
      'own',
      (lsn) => {
        own.reached(lsn);
        lastCaughtUp = Date.now();
      },
    ),
  );
  let holding: LogSession | undefined;
  const derivedChannel = keepOpen('derived', async () => {
    if (await prepareLastingSlot(pool, lastingSlot, options)) await options.onResync?.();
    const channel = await openChannel({ name: lastingSlot, temporary: false }, 'derived', () => undefined);
    holding = channel.session;
    return channel;
  });

  function openChannel(
    slot: { name: string; temporary: boolean },
    channel: LogChannel,
    onHandled: (lsn: Lsn) => void,
  ): Promise<OpenChannel> {
    let closedWith: (error?: Error) => void = () => undefined;
    const closed = new Promise<Error | undefined>((resolve) => (closedWith = resolve));
    let session: LogSession | undefined;
    const handled = (lsn: Lsn) => {
      session?.confirm(lsn);
      onHandled(lsn);
    };
    return openLogSession(
      options.postgresUrl,
      { ...slot, publication: LOG_PUBLICATION },
      {
        onTransaction: async (transaction) => {
          await hand(channel, transaction);
          handled(transaction.endLsn);
        },
        onProgress: handled,
        onClose: (error) => closedWith(error),
        keeps: (table) => catalog.mayFollow(table),
      },
    ).then((opened) => {
      session = opened;
      return { session: opened, closed };
    });
  }

  /** Opens a channel and opens it again whenever it closes, until the source is closed. */
  function keepOpen(channel: LogChannel, open: () => Promise<OpenChannel>) {
    let current: LogSession | undefined;
    const opened = (async () => {
      for (let attempt = 0; !stopped; attempt++) {
        try {
          const result = await open();
          current = result.session;
          const error = await result.closed;
          if (error && !stopped) options.onError(error, channel);
        } catch (error) {
          // The lasting slot streaming to another instance is the normal state of a follower.
          if (!stopped && !isSlotBusy(error)) options.onError(error, channel);
        } finally {
          if (channel === 'derived') holding = undefined;
        }
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
      }
    })();
    return { opened, close: () => current?.close() };
  }

  const target = freshCheck(async () => {
    const { rows } = await pool.query<{ now: string; derived: string | null }>(
      `SELECT pg_current_wal_insert_lsn()::text AS now,
              (SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1) AS derived`,
      [lastingSlot],
    );
    return { now: lsnOf(rows[0]!.now), derived: rows[0]!.derived ? lsnOf(rows[0]!.derived) : 0n };
  });
  const derivedSince = freshCheck(async () => {
    const { rows } = await pool.query<{ derived: string | null }>(
      `SELECT confirmed_flush_lsn::text AS derived FROM pg_replication_slots WHERE slot_name = $1`,
      [lastingSlot],
    );
    return rows[0]?.derived ? lsnOf(rows[0].derived) : 0n;
  });

  // Once a wait ran out, the checks of the next moment do not wait again: one request asks several
  // times (its plan, its total, its cache), and its deadline is not a multiple of the wait.
  let lastTimedOut = 0;
  const patience = () => (Date.now() - lastTimedOut < options.waitMs ? 0 : options.waitMs);

  async function derivedReaches(lsn: Lsn, known: Lsn, deadline: number): Promise<boolean> {
    for (let reached = known; ; reached = await derivedSince()) {
      if (reached >= lsn) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  return {
    follow(collection, channel, listener) {
      const list = listeners[channel].get(collection) ?? [];
      listeners[channel].set(collection, [...list, listener]);
    },
    async caughtUp() {
      const { now, derived } = await target();
      const waitMs = patience();
      const [ownDone, derivedDone] = await Promise.all([
        own.waitFor(now, waitMs),
        derivedReaches(now, derived, Date.now() + waitMs),
      ]);
      if (!ownDone || !derivedDone) lastTimedOut = Date.now();
      return { own: ownDone, derived: derivedDone };
    },
    async handedOn() {
      const done = await own.waitFor((await target()).now, patience());
      if (!done) lastTimedOut = Date.now();
      return done;
    },
    leading: () => holding !== undefined,
    lagSeconds: () => (own.pending() ? (Date.now() - lastCaughtUp) / 1000 : 0),
    async close() {
      stopped = true;
      await Promise.all([ownChannel.close(), derivedChannel.close()]);
      await pool.end().catch(() => undefined);
    },
  };
}

function decoded(change: RowChange): LogChange {
  const before = change.before && BSON.deserialize(change.before);
  const after = change.after && BSON.deserialize(change.after);
  const _id = (after ?? before)?._id ?? (change.key && BSON.deserialize(change.key)['']);
  return { _id, before, after };
}

/** A document changed twice in one run is one change: from before the first to after the last. */
function merge(changes: Map<string, LogChange>, change: LogChange): void {
  const key = Buffer.from(BSON.serialize({ key: change._id })).toString('base64');
  const earlier = changes.get(key);
  changes.delete(key);
  changes.set(key, earlier ? { _id: change._id, before: earlier.before, after: change.after } : change);
}

function isSlotBusy(error: unknown): boolean {
  return error instanceof Error && /is active for PID/.test(error.message);
}

/**
 * The publication of DocumentDB's document tables (every database's: a table made for a new
 * collection is in it from its first row). Not FOR ALL TABLES: PostgreSQL then refuses deletes
 * from the extension's tables that have no replica identity (its index queue).
 */
async function ensurePublication(pool: pg.Pool): Promise<void> {
  const { rowCount } = await pool.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [LOG_PUBLICATION]);
  if (rowCount) return;
  await pool
    .query(`CREATE PUBLICATION ${LOG_PUBLICATION} FOR TABLES IN SCHEMA documentdb_data`)
    .catch((error: { code?: string }) => {
      if (error.code !== '42710') throw error; // another instance made it meanwhile
    });
}

/**
 * Makes the lasting slot where it is missing, and again where the server invalidated it; says
 * whether it is new (what it would have handed on since the last run is unknown: resync).
 */
async function prepareLastingSlot(pool: pg.Pool, slot: string, options: LogSourceOptions): Promise<boolean> {
  const { rows } = await pool.query<{ wal_status: string | null }>(
    'SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1',
    [slot],
  );
  if (rows[0] && rows[0].wal_status !== 'lost') return false;
  if (rows[0]) {
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
