import type { Lsn } from './lsn';

/**
 * Whether the own channel has handed on every transaction a request's snapshot sees committed,
 * without waiting for the log's position to be decoded.
 *
 * The log's insert position runs ahead of what a channel can have handed on by all the WAL of
 * transactions still open: during an owner's bulk update (20,000 products, ~300 MB of WAL in 7 s)
 * PostgreSQL decodes it as it is written, and every request that waited for the position waited
 * ~100–200 ms for an update it cannot see yet. A snapshot (`pg_current_snapshot()`) says which
 * transactions a request can see. A *mark* is a snapshot read with the log's position after it,
 * once the channel has handed on that position: every transaction committed in the mark has been
 * handed on (its commit record precedes the position). A later snapshot is covered when every
 * transaction it sees committed that the mark did not is one the channel has handed on by xid.
 * Anything else (a transaction of a table not followed, an aborted one, one not yet handed on)
 * is unknown, and the request waits for the position as before.
 */

export interface Snapshot {
  xmax: bigint;
  /** Transactions in progress when it was taken (top-level ones: subtransactions are not listed). */
  inProgress: ReadonlySet<bigint>;
}

/** Transaction ids the channel remembers having handed on (pgoutput gives 32 bits of each). */
const SEEN_XIDS = 65_536;
/** Snapshots waiting for the channel to reach their position. */
const MAX_PENDING = 64;
/** The most transaction ids between a mark and a snapshot that are looked up (else: wait). */
const MAX_SPAN = 4_096n;

/** `xmin:xmax:xip,...` (PostgreSQL's pg_snapshot text), or undefined. */
export function snapshotOf(text: string | null | undefined): Snapshot | undefined {
  const match = text ? /^(\d+):(\d+):([\d,]*)$/.exec(text) : null;
  if (!match) return undefined;
  const listed = match[3] ? match[3].split(',').map(BigInt) : [];
  return { xmax: BigInt(match[2]!), inProgress: new Set(listed) };
}

export function createCommitMarks() {
  let mark: Snapshot | undefined;
  const pending: { lsn: Lsn; snapshot: Snapshot }[] = [];
  const seen = new Set<number>();
  const seenRing = new Array<number | undefined>(SEEN_XIDS);
  let ringAt = 0;
  const wasHanded = (xid: bigint) => seen.has(Number(xid & 0xffffffffn));

  return {
    /** A snapshot read together with the log's position after it. */
    taken(lsn: Lsn, snapshot: Snapshot): void {
      pending.push({ lsn, snapshot });
      if (pending.length > MAX_PENDING) pending.shift();
    },
    /** The channel has handed on everything before `lsn`. */
    reached(lsn: Lsn): void {
      while (pending.length > 0 && pending[0]!.lsn <= lsn) mark = pending.shift()!.snapshot;
    },
    /** Transactions handed on whole (a part of one is not: its xid comes with its last part). */
    handed(xids: readonly number[]): void {
      for (const xid of xids) {
        if (seen.has(xid)) continue;
        const evicted = seenRing[ringAt];
        if (evicted !== undefined) seen.delete(evicted);
        seenRing[ringAt] = xid;
        ringAt = (ringAt + 1) % SEEN_XIDS;
        seen.add(xid);
      }
    },
    /** Whether every transaction `snapshot` sees committed is known to be handed on. */
    covers(snapshot: Snapshot): boolean {
      if (!mark || snapshot.xmax - mark.xmax > MAX_SPAN) return false;
      const committedSince = (xid: bigint) => xid < snapshot.xmax && !snapshot.inProgress.has(xid);
      for (const xid of mark.inProgress) if (committedSince(xid) && !wasHanded(xid)) return false;
      for (let xid = mark.xmax; xid < snapshot.xmax; xid++)
        if (committedSince(xid) && !wasHanded(xid)) return false;
      return true;
    },
  };
}
