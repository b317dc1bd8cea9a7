import { createAdaptiveLimit } from './adaptive-limit';
import { createBusyBudget } from './busy-budget';

/** How many database calls of one lane run at once, and how many may wait for a turn. */
export interface LaneLimits {
  /** The most at once; fewer while calls are slow (see createLane). */
  concurrency: number;
  queue: number;
  /**
   * A new request's call is refused at once when its expected wait (calls ahead of it × the
   * recent call duration / the limit) is longer: a short queue in time, not only in count.
   */
  maxWaitMs: number;
  /** No call waits longer than this for its turn, a begun request's included. */
  giveUpMs: number;
  /** A call slower than this means the database is saturated: the lane halves its concurrency. */
  slowMs: number;
  /**
   * The share of the time the lane may keep the database busy (default 1), after a burst of
   * `busyBurstMs` (src/db/guards/busy-budget.ts): past it new requests rest, whatever its clients
   * send. A request already admitted goes on at once (its time still counts).
   */
  busyShare?: number;
  busyBurstMs?: number;
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
  request?: object;
}

/** Requests with a call admitted already (keyed by their abort signal, so they go with them). */
const begun = new WeakSet<object>();

export interface Admission {
  /** Leaves the queue when aborted. */
  signal?: AbortSignal;
  /**
   * The request this call is for. Calls of a request that has had one admitted go first and are
   * queued even past `queue`: work that has begun is finished before new work starts, else
   * every request could get half of what it needs and none finish.
   */
  request?: object;
}

/**
 * A semaphore with a short FIFO queue. Past the queue, or when the wait it would have is longer
 * than `maxWaitMs`, a call is refused with DatabaseBusyError at once; a call whose request was
 * abandoned leaves the queue at once.
 * How many run at once adapts to how long calls take (src/db/guards/adaptive-limit.ts).
 */
export function createLane(
  name: string,
  { concurrency, queue, maxWaitMs, giveUpMs, slowMs, busyShare = 1, busyBurstMs = 0 }: LaneLimits,
) {
  let running = 0;
  const budget = createBusyBudget(busyShare, busyBurstMs);
  /** The timer that admits new requests when the budget's rest is over. */
  let restTimer: NodeJS.Timeout | undefined;
  const resting = () => budget.restMs() > 0;
  const admitted = (request?: object) => request !== undefined && begun.has(request);
  const limit = createAdaptiveLimit(concurrency, slowMs);
  const waiting: Waiter[] = [];

  const admit = () => {
    while (running < limit.slots() && waiting.length > 0) {
      const index = waiting.findIndex((waiter) => admitted(waiter.request));
      if (index < 0 && resting()) {
        restTimer ??= setTimeout(() => {
          restTimer = undefined;
          admit();
        }, budget.restMs()).unref();
        return;
      }
      waiting.splice(Math.max(index, 0), 1)[0]?.start();
    }
  };
  const next = (callMs: number) => {
    running--;
    budget.spend(callMs);
    admit();
  };
  /** Whether a call may take a free slot now: not a new request's while the lane rests. */
  const mayStart = (request?: object) => running < limit.slots() && (!resting() || admitted(request));

  function turn({ signal, request }: Admission): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (mayStart(request)) {
      running++;
      if (request) begun.add(request);
      return Promise.resolve();
    }
    const hasBegun = admitted(request);
    // Calls ahead of it: those waiting, and a running one where every slot is taken (else it waits
    // out the budget's rest alone).
    const ahead = waiting.length + (running >= limit.slots() ? 1 : 0);
    const expectedWaitMs = budget.restMs() + (ahead * limit.callMs()) / busyShare / limit.slots();
    if (!hasBegun && (waiting.length >= queue || expectedWaitMs > maxWaitMs))
      return Promise.reject(new DatabaseBusyError(name));
    return new Promise<void>((resolve, reject) => {
      const leave = (error: unknown) => {
        const index = waiting.indexOf(waiter);
        if (index >= 0) waiting.splice(index, 1);
        cleanUp();
        reject(error);
      };
      const onAbort = () => leave(signal?.reason);
      const timer = setTimeout(() => leave(new DatabaseBusyError(name)), giveUpMs);
      const cleanUp = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        start: () => {
          cleanUp();
          running++;
          if (request) begun.add(request);
          resolve();
        },
        request,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      waiting.push(waiter);
      // A free slot resting (busyShare): admitted when the rest is over.
      admit();
    });
  }

  /** Runs `work` in a slot already taken; the slot is freed when it settles. */
  function occupy<T>(work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let running: Promise<T>;
    try {
      running = work();
    } catch (error) {
      running = Promise.reject(error as Error);
    }
    return running.then(
      (result) => {
        const ms = performance.now() - started;
        limit.observe(ms, true);
        next(ms);
        return result;
      },
      (error: unknown) => {
        const ms = performance.now() - started;
        limit.observe(ms, false);
        next(ms);
        throw error;
      },
    );
  }

  return {
    /** A call with a free slot starts at once, in the same turn (no promise to wait for first). */
    run<T>(work: () => Promise<T>, admission: Admission = {}): Promise<T> {
      const { signal, request } = admission;
      if (!signal?.aborted && mayStart(request)) {
        running++;
        if (request) begun.add(request);
        return occupy(work);
      }
      return turn(admission).then(() => occupy(work));
    },
    /** For tests and metrics: calls running and waiting now, and how many may run. */
    load: () => ({ running, waiting: waiting.length, limit: limit.slots() }),
  };
}

export type Lane = ReturnType<typeof createLane>;
