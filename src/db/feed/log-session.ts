import pg from 'pg';
import { PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';
import { type Lsn, lsnOf } from './lsn';

/**
 * One replication session on a logical slot (PostgreSQL's streaming protocol, pgoutput with binary
 * values): every committed transaction's row changes of DocumentDB's document tables, in commit
 * order, each with the whole BSON document after it (and before it where the table's replica
 * identity is FULL). pg-logical-replication decodes the messages; the session is ours because the
 * feed needs what its service does not give: a temporary slot made on the same connection, and
 * positions confirmed only once what precedes them has been handled.
 */

export interface RowChange {
  /** The document table, e.g. `documents_12` (its collection is in DocumentDB's catalogue). */
  table: string;
  /**
   * The BSON as sent, decoded only for the tables followed (a cluster's log holds every database's
   * writes). `before` where the table's replica identity is FULL; `after` absent for a deletion;
   * `key` the `{"": _id}` of a deletion without a full replica identity.
   */
  before?: Buffer;
  after?: Buffer;
  key?: Buffer;
  /** An insert: there was no document before (a change without `before` may just lack it). */
  inserted?: true;
}

export interface LogTransaction {
  /**
   * Where the transaction's commit record ends: every change before it is handed on with it. 0n
   * for a part of a large transaction handed on before its end (pgoutput sends only committed
   * transactions, so the part is committed; its position is confirmed with the last part).
   */
  endLsn: Lsn;
  changes: RowChange[];
  /** The ids of the transactions handed on whole with it (a part's comes with the last part). */
  xids: number[];
}

export interface SessionHandlers {
  /** Called once at a time, in commit order, with one or more whole transactions; the next waits for it. */
  onTransaction(transaction: LogTransaction): Promise<void>;
  /** Everything committed before `lsn` has been handed on (the server caught up with its log). */
  onProgress(lsn: Lsn): void;
  onClose(error?: Error): void;
  /**
   * Whether a table's rows may be wanted: false drops them as they arrive, uncopied (the log holds
   * every database's writes; a cluster that serves many keeps a reader from copying all of them).
   */
  keeps(table: string): boolean;
}

export interface SlotSpec {
  name: string;
  publication: string;
  /** Shown in pg_stat_replication (which gateway, which database, which channel). */
  applicationName: string;
  /** Made by this session and dropped when it ends. */
  temporary: boolean;
}

export interface LogSession {
  /** Tells the server that everything before `lsn` is handled (a lasting slot keeps WAL from there). */
  confirm(lsn: Lsn): void;
  close(): Promise<void>;
}

/**
 * Most decoded transactions, and changes, held unhandled before the socket is paused (TCP
 * backpressure): a bulk write of many documents in one transaction is held a run at a time, not
 * whole (20,000 documents with their before-images were ~80 MB).
 */
const MAX_QUEUED = 2_000;
const MAX_QUEUED_CHANGES = 4_000;
/**
 * Transactions queued in a row are handed on as one run of at most this many changes: a bulk
 * write that commits document by document is then one write of grams per run, not one per document.
 */
const MAX_RUN_CHANGES = 1_000;
const DOCUMENT_TABLES = 'documentdb_data';
const PG_EPOCH_MS = 946_684_800_000n;

type Queued = { transaction: LogTransaction } | { progress: Lsn };

// A copy: pg reuses the buffer a message arrives in, and the decoded values are views into it,
// while the transaction is handled later (asynchronously).
const bytes = (value: unknown) => (Buffer.isBuffer(value) ? Buffer.from(value) : undefined);

function rowChange(message: Pgoutput.Message, keeps: (table: string) => boolean): RowChange | undefined {
  if (message.tag !== 'insert' && message.tag !== 'update' && message.tag !== 'delete') return undefined;
  if (message.relation.schema !== DOCUMENT_TABLES || !keeps(message.relation.name)) return undefined;
  const table = message.relation.name;
  if (message.tag === 'insert') return { table, after: bytes(message.new.document), inserted: true };
  const before = bytes(message.old?.document);
  const key = bytes(message.key?.object_id);
  return message.tag === 'delete'
    ? { table, before, key }
    : { table, before, key, after: bytes(message.new.document) };
}

function standbyStatus(lsn: Lsn): Buffer {
  const reply = Buffer.alloc(34);
  reply.write('r', 0);
  reply.writeBigUInt64BE(lsn, 1); // written
  reply.writeBigUInt64BE(lsn, 9); // flushed
  reply.writeBigUInt64BE(lsn, 17); // applied
  reply.writeBigInt64BE((BigInt(Date.now()) - PG_EPOCH_MS) * 1000n, 25);
  reply.writeUInt8(0, 33);
  return reply;
}

/** Opens the session and starts streaming from the slot's confirmed position. */
export async function openLogSession(
  connectionString: string,
  slot: SlotSpec,
  handlers: SessionHandlers,
): Promise<LogSession> {
  const client = new pg.Client({
    connectionString,
    replication: 'database',
    application_name: slot.applicationName,
  } as pg.ClientConfig);
  // Failures reach onClose (the connection's end) or the calls that met them: never uncaught.
  client.on('error', () => undefined);
  await client.connect();
  const decoder = new PgoutputPlugin({ protoVersion: 1, publicationNames: [slot.publication] });
  // pg's Client hides the protocol connection; replication needs its copy stream.
  const connection = (client as unknown as { connection: PgConnection }).connection;
  const queue: Queued[] = [];
  let open: LogTransaction | undefined;
  let queuedChanges = 0;
  let draining = false;
  let confirmed = 0n;
  let closed = false;

  const send = (lsn: Lsn) => {
    if (!closed) connection.sendCopyFromChunk(standbyStatus(lsn));
  };
  /** The next item to hand on: a progress mark, or the transactions queued in a row, as one run. */
  const nextRun = (): Queued => {
    const first = queue.shift()!;
    if ('progress' in first) return first;
    const run: LogTransaction = {
      endLsn: first.transaction.endLsn,
      changes: [...first.transaction.changes],
      xids: [...first.transaction.xids],
    };
    for (let next = queue[0]; next && 'transaction' in next; next = queue[0]) {
      if (run.changes.length + next.transaction.changes.length > MAX_RUN_CHANGES) break;
      queue.shift();
      run.changes.push(...next.transaction.changes);
      run.xids.push(...next.transaction.xids);
      // A part of a transaction (0n) does not take back the position of one before it.
      if (next.transaction.endLsn > run.endLsn) run.endLsn = next.transaction.endLsn;
    }
    queuedChanges -= run.changes.length;
    return { transaction: run };
  };
  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0 && !closed) {
        const next = nextRun();
        if ('transaction' in next) await handlers.onTransaction(next.transaction);
        else handlers.onProgress(next.progress);
        if (queue.length < MAX_QUEUED / 2 && queuedChanges < MAX_QUEUED_CHANGES / 2)
          connection.stream.resume();
      }
    } catch (error) {
      closed = true;
      handlers.onClose(error as Error);
      await client.end().catch(() => undefined);
    } finally {
      draining = false;
    }
  };
  const enqueue = (item: Queued) => {
    queue.push(item);
    if ('transaction' in item) queuedChanges += item.transaction.changes.length;
    if (queue.length >= MAX_QUEUED || queuedChanges >= MAX_QUEUED_CHANGES) connection.stream.pause();
    void drain();
  };

  connection.on('copyData', ({ chunk }: { chunk: Buffer }) => {
    if (chunk[0] === 0x6b) {
      // Keepalive: the server has sent everything before its position (while no transaction is open).
      if (!open) enqueue({ progress: chunk.readBigUInt64BE(1) });
      if (chunk[17] === 1) send(confirmed);
      return;
    }
    if (chunk[0] !== 0x77) return;
    const message = decoder.parse(chunk.subarray(25)) as Pgoutput.Message;
    if (message.tag === 'begin')
      open = { endLsn: 0n, changes: [], xids: [message.xid >>> 0] }; // read as signed
    else if (message.tag === 'commit' && open) {
      open.endLsn = lsnOf(message.commitEndLsn ?? '0/0');
      enqueue({ transaction: open });
      open = undefined;
    } else {
      const change = rowChange(message, handlers.keeps);
      if (change && open) open.changes.push(change);
      if (open && open.changes.length >= MAX_RUN_CHANGES) {
        enqueue({ transaction: { endLsn: 0n, changes: open.changes, xids: [] } });
        open = { endLsn: 0n, changes: [], xids: open.xids };
      }
    }
  });
  client.on('end', () => {
    if (!closed) handlers.onClose(new Error('the replication connection closed'));
    closed = true;
  });

  try {
    if (slot.temporary) await client.query(`CREATE_REPLICATION_SLOT ${slot.name} TEMPORARY LOGICAL pgoutput`);
    const options = `proto_version '1', publication_names '${slot.publication}', binary 'true'`;
    // Answers only when streaming ends: errors after start arrive through onClose.
    client.query(`START_REPLICATION SLOT ${slot.name} LOGICAL 0/0 (${options})`).then(
      () => undefined,
      (error: Error) => {
        if (!closed) handlers.onClose(error);
        closed = true;
      },
    );
    await new Promise<void>((resolve, reject) => {
      connection.once('replicationStart', () => resolve());
      client.once('end', () => reject(new Error('the replication connection closed before streaming')));
      connection.once('errorMessage', (error: Error) => reject(error));
    });
  } catch (error) {
    closed = true;
    await client.end().catch(() => undefined);
    throw error;
  }

  return {
    confirm(lsn) {
      if (lsn <= confirmed) return;
      confirmed = lsn;
      send(lsn);
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.end().catch(() => undefined);
    },
  };
}

interface PgConnection {
  on(event: 'copyData', listener: (message: { chunk: Buffer }) => void): void;
  once(event: string, listener: (...args: never[]) => void): void;
  sendCopyFromChunk(chunk: Buffer): void;
  stream: { pause(): void; resume(): void };
}
