import type { Lsn } from './lsn';

/** A channel's handled position, and callers waiting (each for a bounded time) until it reaches theirs. */
export function createPositionWaiter() {
  let handled = 0n;
  /**
   * Inside a transaction handed on in parts (src/db/feed/log-session.ts: over 1,000 changes, an
   * owner's bulk update): the rest takes about a second per 20,000 changes, longer than a request
   * should wait, so callers answer from the documents at once instead of waiting it out.
   */
  let inLargeTransaction = false;
  const waiting = new Set<{ lsn: Lsn; done: (reached: boolean) => void }>();
  return {
    reached(lsn: Lsn) {
      if (lsn <= handled) return;
      handled = lsn;
      for (const waiter of waiting) if (waiter.lsn <= lsn) waiter.done(true);
    },
    /** Whether the last run handed on was a part of a transaction (its end still to come). */
    handingParts(parts: boolean) {
      inLargeTransaction = parts;
      if (parts) for (const waiter of waiting) waiter.done(false);
    },
    /** Whether callers are waiting (the channel is behind someone's position). */
    pending: () => waiting.size > 0,
    waitFor(lsn: Lsn, timeoutMs: number): Promise<boolean> {
      if (handled >= lsn) return Promise.resolve(true);
      if (inLargeTransaction) return Promise.resolve(false);
      return new Promise((resolve) => {
        const waiter = {
          lsn,
          done: (reached: boolean) => {
            clearTimeout(timer);
            waiting.delete(waiter);
            resolve(reached);
          },
        };
        const timer = setTimeout(() => waiter.done(false), timeoutMs);
        waiting.add(waiter);
      });
    },
  };
}
