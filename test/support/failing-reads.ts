import { AbstractCursor, MongoServerError } from 'mongodb';
import { vi } from 'vitest';

/**
 * Every cursor read of the in-process server fails with `error`, raised where the driver raises
 * it (a cursor's toArray). Undo with `vi.restoreAllMocks()`.
 */
export function failEveryRead(error: () => Error): void {
  vi.spyOn(AbstractCursor.prototype, 'toArray').mockImplementation(() => Promise.reject(error()));
}

/** A server error nobody expected, its message full of internals that must not reach a client. */
export const unexpectedServerError = () =>
  new MongoServerError({
    ok: 0,
    code: 1,
    codeName: 'InternalError',
    errmsg: 'RangeError: variant is null, not money (FerretDB, src/format/money.ts:12)',
  });
