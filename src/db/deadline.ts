import type { Lane } from './admission';
import { instrumented, type AsyncMethods, type QueryObserver } from './instrumented';

/** What every repository read sends the server: maxTimeMS stops the query there, too. */
export interface ReadLimits {
  maxTimeMS?: number;
}

/** The last parameter of every repository method: the driver abandons the operation on `signal`. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** A repository call that outlived MONGODB_TIMEOUT_MS: the database is treated as unavailable. */
export class DatabaseTimeoutError extends Error {
  constructor(query: string, timeoutMs: number) {
    super(`${query} did not complete within ${timeoutMs} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/** The request's client went away: its database work is dropped (the answer reaches nobody). */
export class RequestAbandonedError extends Error {
  constructor(query: string) {
    super(`${query} abandoned: the client has gone`);
    this.name = 'RequestAbandonedError';
  }
}

export interface GuardOptions<T> {
  timeoutMs: number;
  /**
   * All of one request's calls, queueing included, end within `timeoutMs` + this of its first
   * call's start, however many it makes in a row: the answer then leaves within the README's
   * MONGODB_TIMEOUT_MS + 1 s, the rest of the second being the answer's own way out.
   */
  graceMs: number;
  /** The admission lane of each method (src/db/admission.ts). */
  laneOf: (method: keyof T & string) => Lane;
  observe?: QueryObserver;
}

/**
 * When each request's database work must be over, by its abort signal: one deadline for both
 * repositories. A queue wait and a call, or calls in a row, each within its own bound, added up
 * past it: under a hung PostgreSQL answers took 5.43 s and 4.70 s.
 */
const requestDeadlines = new WeakMap<object, number>();

/**
 * Binds a repository to one request: each call waits for a turn in its lane, then runs with a
 * signal that aborts when the request's does (the client left) or at `timeoutMs`; the driver
 * stops the operation on it, and the caller is answered then even if the driver is slow to. The
 * lane's slot is held until the driver lets go, so abandoned work still counts against it.
 *
 * The mongodb 7 driver has no working overall operation timeout (`timeoutMS` is deprecated and
 * ignored): on a hung (SIGSTOPped) server an operation waited 10–15 s for the monitor to give up.
 */
export function guardRepository<T extends AsyncMethods>(
  name: string,
  repository: T,
  { timeoutMs, graceMs, laneOf, observe }: GuardOptions<T>,
): (signal?: AbortSignal) => T {
  const timed = observe ? instrumented(name, repository, observe) : repository;
  const methods = Object.keys(repository).map((method) => ({
    method,
    query: `${name}.${method}`,
    // CallOptions goes after the declared parameters, whatever the caller passed.
    arity: (repository[method] as (...args: never[]) => unknown).length,
    call: timed[method] as (...args: unknown[]) => Promise<unknown>,
    lane: laneOf(method),
  }));

  return (requestSignal) => {
    const bound: Record<string, unknown> = {};
    const deadlineKey = requestSignal ?? bound;
    for (const { method, query, arity, call, lane } of methods) {
      bound[method] = async (...args: unknown[]) => {
        let deadline = requestDeadlines.get(deadlineKey);
        if (deadline === undefined) {
          deadline = performance.now() + timeoutMs + graceMs;
          requestDeadlines.set(deadlineKey, deadline);
        }
        const left = deadline - performance.now();
        if (left <= 0) throw new DatabaseTimeoutError(query, timeoutMs);
        const controller = new AbortController();
        const { signal } = controller;
        const leave = () => controller.abort(new RequestAbandonedError(query));
        if (requestSignal?.aborted) leave();
        requestSignal?.addEventListener('abort', leave, { once: true });
        const overall = setTimeout(() => controller.abort(new DatabaseTimeoutError(query, timeoutMs)), left);
        let timer: NodeJS.Timeout | undefined;
        const stopped = new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
        );
        // Settles when the driver lets go, which is when the lane's slot is freed.
        const admitted = lane.run(
          () => {
            timer = setTimeout(() => controller.abort(new DatabaseTimeoutError(query, timeoutMs)), timeoutMs);
            const positional = args.slice(0, arity);
            positional.length = arity;
            return call(...positional, { signal } satisfies CallOptions);
          },
          { signal, request: requestSignal },
        );
        // Whichever loses the race below fails unobserved: nobody waits for it any more.
        admitted.catch(() => undefined);
        stopped.catch(() => undefined);
        try {
          return await Promise.race([admitted, stopped]);
        } finally {
          clearTimeout(overall);
          clearTimeout(timer);
          requestSignal?.removeEventListener('abort', leave);
        }
      };
    }
    return bound as T;
  };
}
