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
  /** The admission lane of each call (src/db/guards/admission.ts), by its method and arguments. */
  laneOf: (method: keyof T & string, args: readonly unknown[]) => Lane;
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
  // The methods are made once, on a prototype: binding a repository to a request is one small
  // object, not a closure per method per request (two repositories, ~20 methods, every request).
  const prototype: Record<string, unknown> = {};
  for (const method of Object.keys(repository)) {
    const spec: MethodSpec = {
      query: `${name}.${method}`,
      // CallOptions goes after the declared parameters, whatever the caller passed.
      arity: (repository[method] as (...args: never[]) => unknown).length,
      call: timed[method] as (...args: unknown[]) => Promise<unknown>,
      laneOf: (args) => laneOf(method as keyof T & string, args),
    };
    prototype[method] = function (this: RequestBinding, ...args: unknown[]) {
      return guardedCall(this, spec, args, timeoutMs, graceMs);
    };
  }
  return (requestSignal) => {
    const binding: RequestBinding = Object.create(prototype) as RequestBinding;
    binding.signal = requestSignal;
    binding.inFlight = undefined;
    return binding as unknown as T;
  };
}

interface MethodSpec {
  query: string;
  arity: number;
  call: (...args: unknown[]) => Promise<unknown>;
  laneOf: (args: readonly unknown[]) => Lane;
}

/** A repository bound to one request: its signal, and the calls its abort must stop (the first adds the listener). */
interface RequestBinding {
  signal: AbortSignal | undefined;
  inFlight: Set<() => void> | undefined;
}

function guardedCall(
  binding: RequestBinding,
  { query, arity, call, laneOf }: MethodSpec,
  args: unknown[],
  timeoutMs: number,
  graceMs: number,
): Promise<unknown> {
  const requestSignal = binding.signal;
  const lane = laneOf(args);
  const deadlineKey = requestSignal ?? binding;
  let deadline = requestDeadlines.get(deadlineKey);
  if (deadline === undefined) {
    deadline = performance.now() + timeoutMs + graceMs;
    requestDeadlines.set(deadlineKey, deadline);
  }
  const until = deadline;
  const left = until - performance.now();
  if (left <= 0) return Promise.reject(new DatabaseTimeoutError(query, timeoutMs));
  if (requestSignal?.aborted) return Promise.reject(new RequestAbandonedError(query));
  let inFlight = binding.inFlight;
  if (!inFlight) {
    const calls = (inFlight = binding.inFlight = new Set());
    requestSignal?.addEventListener('abort', () => calls.forEach((leave) => leave()), { once: true });
  }
  const controller = new AbortController();
  const { signal } = controller;
  const running = inFlight;
  return new Promise((resolve, reject) => {
    // One timer at a time: the request's deadline while queued, then the nearer of it and the call's.
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      clearTimeout(timer);
      running.delete(leave);
    };
    // The caller is answered at once; the driver lets go of the slot when it sees the abort.
    const stop = (reason: Error) => {
      settle();
      controller.abort(reason);
      reject(reason);
    };
    const leave = () => stop(new RequestAbandonedError(query));
    const expire = () => stop(new DatabaseTimeoutError(query, timeoutMs));
    running.add(leave);
    lane
      .run(
        () => {
          clearTimeout(timer);
          timer = setTimeout(expire, Math.min(timeoutMs, until - performance.now()));
          const positional = args.slice(0, arity);
          positional.length = arity;
          return call(...positional, { signal } satisfies CallOptions);
        },
        { signal, request: requestSignal },
      )
      .then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(error as Error);
        },
      );
    // Admitted in this turn unless the lane queued it: the wait is bounded by the deadline.
    timer ??= setTimeout(expire, left);
  });
}
