import { DatabaseBusyError, type Lane } from './admission';
import { createExpiryList, type Expiring } from './expiry-list';
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
 * What each request's database work shares, by its abort signal, for both repositories: when it must
 * be over (a queue wait and a call, or calls in a row, each within its own bound, added up past it:
 * under a hung PostgreSQL answers took 5.43 s and 4.70 s), and its calls in flight, which its abort
 * stops (one listener a request, added by its first call).
 */
interface RequestState {
  deadline: number;
  inFlight: Set<GuardedCall> | undefined;
}
const requests = new WeakMap<object, RequestState>();

/** Every guarded call's expiry, behind one timer for the process. */
const expiries = createExpiryList();

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
    return binding as unknown as T;
  };
}

interface MethodSpec {
  query: string;
  arity: number;
  call: (...args: unknown[]) => Promise<unknown>;
  laneOf: (args: readonly unknown[]) => Lane;
}

/** A repository bound to one request: its signal (the state's key), or itself without one. */
interface RequestBinding {
  signal: AbortSignal | undefined;
}

function requestState(binding: RequestBinding, timeoutMs: number, graceMs: number): RequestState {
  const key = binding.signal ?? binding;
  let state = requests.get(key);
  if (state === undefined) {
    state = { deadline: performance.now() + timeoutMs + graceMs, inFlight: undefined };
    requests.set(key, state);
  }
  return state;
}

function guardedCall(
  binding: RequestBinding,
  spec: MethodSpec,
  args: unknown[],
  timeoutMs: number,
  graceMs: number,
): Promise<unknown> {
  const requestSignal = binding.signal;
  const lane = spec.laneOf(args);
  const state = requestState(binding, timeoutMs, graceMs);
  const left = state.deadline - performance.now();
  if (left <= 0) return Promise.reject(new DatabaseTimeoutError(spec.query, timeoutMs));
  if (requestSignal?.aborted) return Promise.reject(new RequestAbandonedError(spec.query));
  let inFlight = state.inFlight;
  if (!inFlight) {
    const calls = (inFlight = state.inFlight = new Set());
    requestSignal?.addEventListener('abort', () => calls.forEach((call) => call.leave()), { once: true });
  }
  const call = new GuardedCall(spec.query, timeoutMs, inFlight);
  const { signal } = call.controller;
  lane
    .run(
      () => {
        call.admitted(state.deadline);
        const positional = args.slice(0, spec.arity);
        positional.length = spec.arity;
        return spec.call(...positional, { signal } satisfies CallOptions);
      },
      { signal, request: requestSignal },
    )
    .then(
      (value) => call.resolve(value),
      (error: unknown) => call.reject(error),
    );
  // Queued (not admitted in this turn): the wait is bounded by the request's deadline.
  call.waiting(state.deadline);
  return call.promise;
}

/**
 * One call in flight: answered when the driver answers, or at once when it expires (the request's
 * deadline while queued, then the nearer of it and `timeoutMs`) or its request is abandoned; the
 * driver lets go of the lane's slot when it sees the abort.
 */
class GuardedCall implements Expiring {
  readonly controller = new AbortController();
  readonly promise: Promise<unknown>;
  expiresAt = Infinity;
  previous: Expiring | undefined = undefined;
  next: Expiring | undefined = undefined;
  listed = false;
  private answer!: (value: unknown) => void;
  private fail!: (error: Error) => void;

  constructor(
    private readonly query: string,
    private readonly timeoutMs: number,
    private readonly inFlight: Set<GuardedCall>,
  ) {
    this.promise = new Promise((resolve, reject) => {
      this.answer = resolve;
      this.fail = reject;
    });
    inFlight.add(this);
  }

  /** Its turn in the lane came: from now it has `timeoutMs`, within the request's deadline. */
  admitted(requestDeadline: number): void {
    expiries.remove(this);
    this.expiresAt = Math.min(performance.now() + this.timeoutMs, requestDeadline);
    expiries.add(this);
  }

  /** Still in the lane's queue after the call was made (neither admitted nor settled). */
  waiting(requestDeadline: number): void {
    if (this.expiresAt !== Infinity || !this.inFlight.has(this)) return;
    this.expiresAt = requestDeadline;
    expiries.add(this);
  }

  resolve(value: unknown): void {
    this.settle();
    this.answer(value);
  }

  reject(error: unknown): void {
    this.settle();
    this.fail(error as Error);
  }

  expire(): void {
    this.stop(new DatabaseTimeoutError(this.query, this.timeoutMs));
  }

  leave(): void {
    this.stop(new RequestAbandonedError(this.query));
  }

  private settle(): void {
    expiries.remove(this);
    this.inFlight.delete(this);
  }

  /** The caller is answered at once; the driver lets go of the slot when it sees the abort. */
  private stop(reason: Error): void {
    this.settle();
    this.controller.abort(reason);
    this.fail(reason);
  }
}

/** A call refused or abandoned by the admission control (a 503), not a failure to log. */
export function isAdmissionOutcome(error: unknown): boolean {
  const original = (error as { originalError?: unknown } | null)?.originalError ?? error;
  return original instanceof DatabaseBusyError || original instanceof RequestAbandonedError;
}
