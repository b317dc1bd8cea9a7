import type { LogTransaction } from './log-transaction';
import type { Lsn } from './lsn';

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
export const MAX_RUN_CHANGES = 1_000;

export type Queued = { transaction: LogTransaction } | { progress: Lsn };

interface HandOnOptions {
  handlers: {
    onTransaction(transaction: LogTransaction): Promise<void>;
    onProgress(lsn: Lsn): void;
  };
  /** Stops and starts reading the replication stream (TCP backpressure). */
  pause(): void;
  resume(): void;
  isClosed(): boolean;
  /** A handler failed: the session ends with its error. */
  fail(error: Error): Promise<void>;
}

/** What a session has decoded and not yet handed on, handed on one run at a time, in order. */
export function createHandOnQueue({ handlers, pause, resume, isClosed, fail }: HandOnOptions) {
  const queue: Queued[] = [];
  let queuedChanges = 0;
  let draining = false;

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
      while (queue.length > 0 && !isClosed()) {
        const next = nextRun();
        if ('transaction' in next) await handlers.onTransaction(next.transaction);
        else handlers.onProgress(next.progress);
        if (queue.length < MAX_QUEUED / 2 && queuedChanges < MAX_QUEUED_CHANGES / 2) resume();
      }
    } catch (error) {
      await fail(error as Error);
    } finally {
      draining = false;
    }
  };

  return {
    enqueue(item: Queued): void {
      queue.push(item);
      if ('transaction' in item) queuedChanges += item.transaction.changes.length;
      if (queue.length >= MAX_QUEUED || queuedChanges >= MAX_QUEUED_CHANGES) pause();
      void drain();
    },
  };
}
