import type { Lsn } from './lsn';

/** A channel's handled position, and callers waiting (each for a bounded time) until it reaches theirs. */
export function createPositionWaiter() {
  let handled = 0n;
  const waiting = new Set<{ lsn: Lsn; done: (reached: boolean) => void }>();
  return {
    reached(lsn: Lsn) {
      if (lsn <= handled) return;
      handled = lsn;
      for (const waiter of waiting) if (waiter.lsn <= lsn) waiter.done(true);
    },
    /** Whether callers are waiting (the channel is behind someone's position). */
    pending: () => waiting.size > 0,
    waitFor(lsn: Lsn, timeoutMs: number): Promise<boolean> {
      if (handled >= lsn) return Promise.resolve(true);
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
