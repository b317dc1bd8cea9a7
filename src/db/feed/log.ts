import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { BSON, type Document } from 'mongodb';
import { createLogCatalog } from './log-catalog';
import { keepChannelOpen, type ChannelSpec } from './log-channel';
import { createCommitMarks } from './commit-marks';
import { createLogPositions } from './log-position';
import { ensureResyncTable, prepareLastingSlot, resynced } from './log-slot';
import { ensureSlotsTable, sweepAbandonedSlots } from './log-abandoned';
import type { LogSession, LogTransaction, RowChange } from './log-session';
import { createPositionWaiter } from './position-waiter';
import { createUnderived, type Underived } from './underived';

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
  /** There was no document before it (an insert), as opposed to a before-image not sent. */
  inserted?: true;
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
  /** How long another database's lasting slot may go unserved before it is dropped (src/db/feed/log-abandoned.ts). */
  abandonMs: number;
  /** Told of each abandoned lasting slot dropped. */
  onSlotDropped?: (slot: string) => void;
}

export interface LogSource {
  follow(collection: string, channel: LogChannel, listener: LogListener): void;
  /** Whether each channel has handed on everything committed before the call (waiting up to waitMs). */
  caughtUp(): Promise<Record<LogChannel, boolean>>;
  /** The own channel alone: whether it has handed on everything committed before the call. */
  handedOn(): Promise<boolean>;
  /**
   * Once the own channel has handed on everything committed before the call: the `_id`s of
   * `collection` whose derived state the lasting slot's holder may not have written yet
   * (src/db/feed/underived.ts); undefined when the own channel is behind or that is not known.
   */
  underived(collection: string): Promise<Underived | undefined>;
  /** Whether this instance holds the lasting slot. */
  leading(): boolean;
  lagSeconds(): number;
  close(): Promise<void>;
}

export const LOG_PUBLICATION = 'storefront_feed';

/** How a channel's connection is named in pg_stat_replication (PostgreSQL keeps 63 bytes). */
export function logApplicationName(dbName: string, channel: LogChannel): string {
  return `storefront ${channel} ${dbName}`.slice(0, 63);
}

/** The lasting slot of a database: one per database the gateway serves, whatever the fleet. */
export function lastingSlotName(dbName: string): string {
  return `storefront_${createHash('sha256').update(dbName).digest('hex').slice(0, 24)}`;
}

export async function openLogSource(options: LogSourceOptions): Promise<LogSource> {
  const pool = new pg.Pool({ connectionString: options.postgresUrl, max: 2 });
  pool.on('error', () => undefined);
  // A connection cut in a query (PostgreSQL restarted) may report it twice: once to the query,
  // once more after pg-pool has taken its own listener off, uncaught. The query's error is enough.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const catalog = createLogCatalog(pool, options.dbName, options.collections);
  await ensurePublication(pool);
  await ensureResyncTable(pool);
  await ensureSlotsTable(pool);
  await catalog.prepare();
  const lastingSlot = lastingSlotName(options.dbName);
  const stopSweeping = sweepAbandonedSlots(pool, lastingSlot, {
    abandonMs: options.abandonMs,
    onDropped: (slot) => options.onSlotDropped?.(slot),
    onError: (error) => options.onError(error, 'derived'),
  });
  const listeners: Record<LogChannel, Map<string, LogListener[]>> = { own: new Map(), derived: new Map() };
  const own = createPositionWaiter();
  const marks: Record<LogChannel, ReturnType<typeof createCommitMarks>> = {
    own: createCommitMarks(),
    derived: createCommitMarks(),
  };
  let lastCaughtUp = Date.now();
  const underived = createUnderived();

  async function hand(channel: LogChannel, transaction: LogTransaction): Promise<void> {
    const byCollection = new Map<string, Map<string, LogChange>>();
    for (const change of transaction.changes) {
      const name = await catalog.collectionOf(change.table);
      if (name?.database !== options.dbName || !listeners[channel].has(name.collection)) continue;
      const changes = byCollection.get(name.collection) ?? new Map<string, LogChange>();
      merge(changes, decoded(change));
      byCollection.set(name.collection, changes);
    }
    if (channel === 'own') {
      for (const [collection, changes] of byCollection)
        underived.noted(
          collection,
          [...changes.values()].map((change) => change._id),
          transaction.endLsn,
        );
      if (transaction.endLsn > 0n) underived.ended(transaction.endLsn);
    }
    for (const [collection, changes] of byCollection)
      for (const listener of listeners[channel].get(collection) ?? []) await listener([...changes.values()]);
    marks[channel].handed(transaction.xids);
    if (channel === 'own') own.handingParts(transaction.endLsn === 0n);
  }

  const channel = (name: LogChannel, spec: Pick<ChannelSpec, 'slot' | 'handled' | 'onOpen' | 'onEnd'>) =>
    keepChannelOpen({
      ...spec,
      postgresUrl: options.postgresUrl,
      publication: LOG_PUBLICATION,
      applicationName: logApplicationName(options.dbName, name),
      hand: (transaction) => hand(name, transaction),
      keeps: (table) => catalog.mayFollow(table),
      onError: (error) => options.onError(error, name),
    });
  const ownChannel = channel('own', {
    slot: async () => ({ name: `storefront_own_${randomBytes(8).toString('hex')}`, temporary: true }),
    handled: (lsn) => {
      underived.reached(lsn);
      own.reached(lsn);
      marks.own.reached(lsn);
      lastCaughtUp = Date.now();
    },
    // A new temporary slot starts at the log's end: what was committed while none was open is unseen.
    onOpen: async (_session, reopened) => {
      underived.reopened();
      if (reopened) await handGap();
    },
    onEnd: () => undefined,
  });
  let holding: LogSession | undefined;
  const derivedChannel = channel('derived', {
    slot: async () => {
      if (await prepareLastingSlot(pool, lastingSlot, options)) {
        await options.onResync?.();
        await resynced(pool, lastingSlot);
      }
      return { name: lastingSlot, temporary: false };
    },
    handled: (lsn) => marks.derived.reached(lsn),
    onOpen: (session) => {
      holding = session;
    },
    onEnd: () => {
      holding = undefined;
    },
  });

  async function handGap(): Promise<void> {
    for (const collectionListeners of listeners.own.values())
      for (const listener of collectionListeners) await listener([], true);
  }

  const positions = createLogPositions(pool, lastingSlot, options.waitMs, own, marks);

  return {
    follow(collection, channel, listener) {
      const list = listeners[channel].get(collection) ?? [];
      listeners[channel].set(collection, [...list, listener]);
    },
    caughtUp: positions.caughtUp,
    handedOn: positions.handedOn,
    async underived(collection) {
      const derived = await positions.derivedOnceHandedOn();
      return derived === undefined ? undefined : underived.ids(collection, derived);
    },
    leading: () => holding !== undefined,
    lagSeconds: () => (own.pending() ? (Date.now() - lastCaughtUp) / 1000 : 0),
    async close() {
      stopSweeping();
      await Promise.all([ownChannel.close(), derivedChannel.close()]);
      await pool.end().catch(() => undefined);
    },
  };
}

function decoded(change: RowChange): LogChange {
  const before = change.before && BSON.deserialize(change.before);
  const after = change.after && BSON.deserialize(change.after);
  const _id = (after ?? before)?._id ?? (change.key && BSON.deserialize(change.key)['']);
  return { _id, before, after, ...(change.inserted ? { inserted: change.inserted } : {}) };
}

/** A document changed twice in one run is one change: from before the first to after the last. */
function merge(changes: Map<string, LogChange>, change: LogChange): void {
  const key = Buffer.from(BSON.serialize({ key: change._id })).toString('base64');
  const earlier = changes.get(key);
  changes.delete(key);
  changes.set(
    key,
    earlier
      ? { _id: change._id, before: earlier.before, after: change.after, inserted: earlier.inserted }
      : change,
  );
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
      // Another instance made it meanwhile: "already exists", or, when both inserted at once, the
      // catalogue's unique index.
      if (error.code !== '42710' && error.code !== '23505') throw error;
    });
}

/**
 * Makes the lasting slot where it is missing, and again where the server invalidated it; says
 * whether it is new (what it would have handed on since the last run is unknown: resync).
 */
