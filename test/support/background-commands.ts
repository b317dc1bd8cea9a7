import type { Document } from 'mongodb';
import { FEED_COMMENT } from '../../src/db/change-feed';

/**
 * Commands the server sends whatever the traffic, so whether a request's window holds them depends
 * on the clock: the probes for products without current grams (at most once a second), the
 * grams' sample (every ten minutes), and the change feed's poll, counts and writes (tagged with
 * its comment).
 */
export function isBackgroundCommand(command: Document): boolean {
  return (
    command.comment === FEED_COMMENT ||
    JSON.stringify(command.filter ?? {}).includes('search_grams_version') ||
    JSON.stringify(command.pipeline ?? []).includes('$sample')
  );
}
