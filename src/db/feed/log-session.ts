import pg from 'pg';
import { PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';
import { createHandOnQueue, MAX_RUN_CHANGES } from './log-queue';
import type { LogTransaction, RowChange } from './log-transaction';
import { type Lsn, lsnOf } from './lsn';

/**
 * One replication session on a logical slot (PostgreSQL's streaming protocol, pgoutput with binary
 * values): every committed transaction's row changes of DocumentDB's document tables, in commit
 * order, each with the whole BSON document after it (and before it where the table's replica
 * identity is FULL). pg-logical-replication decodes the messages; the session is ours because the
 * feed needs what its service does not give: a temporary slot made on the same connection, and
 * positions confirmed only once what precedes them has been handled.
 */

export type { LogTransaction, RowChange } from './log-transaction';

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

const DOCUMENT_TABLES = 'documentdb_data';
const PG_EPOCH_MS = 946_684_800_000n;

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
  let open: LogTransaction | undefined;
  let confirmed = 0n;
  let closed = false;

  const send = (lsn: Lsn) => {
    if (!closed) connection.sendCopyFromChunk(standbyStatus(lsn));
  };
  const { enqueue } = createHandOnQueue({
    handlers,
    pause: () => connection.stream.pause(),
    resume: () => connection.stream.resume(),
    isClosed: () => closed,
    fail: async (error) => {
      closed = true;
      handlers.onClose(error);
      await client.end().catch(() => undefined);
    },
  });

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
