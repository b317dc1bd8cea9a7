import type { UnreadableReport } from '../db/document-reading';
import type { Logger } from '../logger';

/** How long a document, once logged, is only counted: a bad product on a busy page is one line a minute. */
const QUIET_MS = 60_000;
/** Documents remembered as logged (the oldest forgotten first): the memory bound. */
const REMEMBERED = 1_000;

/**
 * Reports documents that could not be served: every one counted (`count`), each logged as one
 * warning line with its collection, key and reason, at most once per QUIET_MS.
 */
export function createUnreadableReport(
  logger: Logger,
  count?: (collection: string) => void,
  now: () => number = Date.now,
): UnreadableReport {
  const loggedAt = new Map<string, number>();
  return (collection, key, reason) => {
    count?.(collection);
    const name = `${collection} ${key}`;
    const last = loggedAt.get(name);
    if (last !== undefined && now() - last < QUIET_MS) return;
    loggedAt.delete(name);
    if (loggedAt.size >= REMEMBERED) loggedAt.delete(loggedAt.keys().next().value!);
    loggedAt.set(name, now());
    logger.warn({ collection, key, reason }, 'stored document left out: it cannot be read');
  };
}
