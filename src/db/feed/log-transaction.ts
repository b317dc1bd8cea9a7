import type { Lsn } from './lsn';

/** What a replication session hands on (src/db/feed/log-session.ts). */

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
