import type { Logger } from '../logger';

export interface ErrorLogOptions {
  /** Error lines written per second at most; past it they are counted and summed up once a second. */
  linesPerSecond?: number;
  /** Stacks remembered as already written (oldest forgotten first). */
  knownStacks?: number;
}

export interface ErrorLog {
  error(error: unknown, message: string, details?: Record<string, unknown>): void;
}

interface Described {
  type: string;
  message: string;
  stack?: string;
}

function describe(error: unknown): Described {
  if (error instanceof Error) {
    // A GraphQLError wrapping a thrown error is named after it (graphql-js copies its stack).
    const original = (error as { originalError?: unknown }).originalError;
    const name = original instanceof Error ? original.name : error.name;
    return { type: name, message: error.message, stack: error.stack };
  }
  return { type: typeof error, message: String(error) };
}

/**
 * Error lines a failure storm cannot multiply: a database that fails every read fails every field
 * of every request (one request of 20 × `nodes` of 100 IDs gave 1,902 lines with stacks, 963 kB).
 * - The same error again in the same tick (the errors of one result are masked in one pass) is
 *   counted, and written once after the tick as "repeated N more times": a few lines per request.
 * - A stack is written the first time it is seen; after that the type and message only.
 * - At most `linesPerSecond` lines a second; the rest are counted into one summary line.
 */
export function createErrorLog(
  logger: Logger,
  { linesPerSecond = 10, knownStacks = 100 }: ErrorLogOptions = {},
): ErrorLog {
  const writtenStacks = new Set<string>();
  const repeats = new Map<string, { message: string; error: Described; count: number }>();
  let windowStart = 0;
  let linesInWindow = 0;
  let leftOut = 0;

  const summarise = () => {
    if (leftOut === 0) return;
    logger.warn({ leftOut }, 'error lines left out in the last second (the log is rate-limited)');
    leftOut = 0;
  };

  const write = (fields: Record<string, unknown>, message: string) => {
    const now = Date.now();
    if (now - windowStart >= 1_000) {
      windowStart = now;
      linesInWindow = 0;
    }
    if (linesInWindow >= linesPerSecond) {
      if (leftOut++ === 0) setTimeout(summarise, 1_000).unref();
      return;
    }
    linesInWindow += 1;
    logger.error(fields, message);
  };

  /** An Error for pino's `err` serialiser, with its stack or, when written before, one line. */
  const asLogged = (error: Described, stackWrittenBefore = true): Error => {
    const logged = new Error(error.message);
    logged.name = error.type;
    logged.stack = stackWrittenBefore || !error.stack ? `${error.type}: ${error.message}` : error.stack;
    return logged;
  };

  const withoutKnownStack = (error: Described): Error => {
    if (!error.stack || writtenStacks.has(error.stack)) return asLogged(error);
    writtenStacks.add(error.stack);
    if (writtenStacks.size > knownStacks) writtenStacks.delete(writtenStacks.values().next().value!);
    return asLogged(error, false);
  };

  const flushRepeats = () => {
    for (const { message, error, count } of repeats.values()) {
      if (count > 0) write({ err: asLogged(error), repeated: count }, message);
    }
    repeats.clear();
  };

  return {
    error(error, message, details = {}) {
      const described = describe(error);
      const key = `${message}\u0000${described.type}\u0000${described.message}`;
      const seen = repeats.get(key);
      if (seen) {
        seen.count += 1;
        return;
      }
      if (repeats.size === 0) setImmediate(flushRepeats);
      repeats.set(key, { message, error: described, count: 0 });
      write({ ...details, err: withoutKnownStack(described) }, message);
    },
  };
}
