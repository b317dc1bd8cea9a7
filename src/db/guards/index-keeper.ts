import { MongoServerError, type Collection, type Document, type IndexDescription } from 'mongodb';

/**
 * An index that reads name in a `hint`, kept: a hint to a missing index fails the read (dropped
 * from outside, or left dropped by a load that failed), so each such read would be a 500 until a
 * restart. Instead the read is answered without the hint, and the index is created again once,
 * in the background; until that has finished, reads do without it.
 */

/** What happened to the index, for a log line and a counter. */
export type IndexEvent =
  | { index: string; outcome: 'missing' }
  | { index: string; outcome: 'restored' }
  | { index: string; outcome: 'restore_failed'; error: unknown };

export interface IndexKeeperOptions {
  onEvent?: (event: IndexEvent) => void;
  /** After a failed re-creation, how long reads do without the index before it is tried again. */
  retryMs?: number;
}

/** MongoDB and FerretDB both answer BadValue (2) "hint provided does not correspond to an existing index". */
export function isMissingHintedIndex(error: unknown): boolean {
  return (
    error instanceof MongoServerError &&
    error.code === 2 &&
    /hint provided does not correspond to an existing index/i.test(error.message)
  );
}

export interface IndexKeeper {
  /** Whether reads may name the index (false while it is known to be missing). */
  usable(): boolean;
  /**
   * `read` names the index in a hint; while the index is missing (or when `read` finds it
   * missing), `fallback` answers instead, without it.
   */
  readWith<R>(read: () => Promise<R>, fallback: () => Promise<R>): Promise<R>;
}

export function createIndexKeeper<T extends Document>(
  collection: Collection<T>,
  index: IndexDescription & { name: string },
  { onEvent = () => undefined, retryMs = 60_000 }: IndexKeeperOptions = {},
): IndexKeeper {
  let missing = false;
  let restoring = false;
  let retryAt = 0;
  /** Times the index was found missing: a read that began before the last time says nothing new. */
  let losses = 0;

  function restore(): void {
    restoring = true;
    collection
      .createIndexes([index])
      .then(
        () => {
          missing = false;
          onEvent({ index: index.name, outcome: 'restored' });
        },
        (error: unknown) => {
          retryAt = performance.now() + retryMs;
          onEvent({ index: index.name, outcome: 'restore_failed', error });
        },
      )
      .finally(() => (restoring = false));
  }

  function usable(): boolean {
    if (missing && !restoring && performance.now() >= retryAt) restore();
    return !missing;
  }

  return {
    usable,
    async readWith(read, fallback) {
      if (!usable()) return fallback();
      const lossesBefore = losses;
      try {
        return await read();
      } catch (error) {
        if (!isMissingHintedIndex(error)) throw error;
        if (!missing && losses === lossesBefore) {
          losses += 1;
          missing = true;
          onEvent({ index: index.name, outcome: 'missing' });
          restore();
        }
        return fallback();
      }
    },
  };
}
