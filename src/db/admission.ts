/** How many database calls of one lane run at once, and how many may wait for a turn. */
export interface LaneLimits {
  concurrency: number;
  queue: number;
  /** Longest a call waits for its turn before it is refused (the queue is short, so rarely). */
  maxWaitMs: number;
}

/** Refused for want of capacity: answered 503 with Retry-After at once, never after a long wait. */
export class DatabaseBusyError extends Error {
  constructor(lane: string) {
    super(`the ${lane} database lane is full`);
    this.name = 'DatabaseBusyError';
  }
}

interface Waiter {
  start: () => void;
}

/**
 * A semaphore with a short FIFO queue. Past the queue, or after `maxWaitMs` in it, a call is
 * refused with DatabaseBusyError; a call whose request was abandoned leaves the queue at once.
 */
export function createLane(name: string, { concurrency, queue, maxWaitMs }: LaneLimits) {
  let running = 0;
  const waiting: Waiter[] = [];

  const next = () => {
    running--;
    waiting.shift()?.start();
  };

  function turn(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (running < concurrency) {
      running++;
      return Promise.resolve();
    }
    if (waiting.length >= queue) return Promise.reject(new DatabaseBusyError(name));
    return new Promise<void>((resolve, reject) => {
      const leave = (error: unknown) => {
        const index = waiting.indexOf(waiter);
        if (index >= 0) waiting.splice(index, 1);
        cleanUp();
        reject(error);
      };
      const onAbort = () => leave(signal?.reason);
      const timer = setTimeout(() => leave(new DatabaseBusyError(name)), maxWaitMs);
      const cleanUp = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        start: () => {
          cleanUp();
          running++;
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      waiting.push(waiter);
    });
  }

  return {
    async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      await turn(signal);
      try {
        return await work();
      } finally {
        next();
      }
    },
    /** For tests and metrics: calls running and waiting now. */
    load: () => ({ running, waiting: waiting.length }),
  };
}

export type Lane = ReturnType<typeof createLane>;
