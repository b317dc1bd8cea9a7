import type { Document } from 'mongodb';
import { FEED_COMMENT } from '../../src/db/feed-types';
import { FOREIGN_KEY_PROBE } from '../../src/db/foreign-keys';

/**
 * Commands the server sends whatever the traffic, so whether a request's window holds them depends
 * on the clock: the probes for products without current grams (at most once a second), the
 * grams' sample (every ten minutes), the probe for documents keyed by other writers (once a
 * second), and the change feed's poll, counts and writes (tagged with its comment).
 */
export function isBackgroundCommand(command: Document): boolean {
  return (
    command.comment === FEED_COMMENT ||
    command.comment === FOREIGN_KEY_PROBE ||
    JSON.stringify(command.filter ?? {}).includes('search_grams_version') ||
    JSON.stringify(command.pipeline ?? []).includes('$sample')
  );
}
