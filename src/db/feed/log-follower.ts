import type { Document } from 'mongodb';
import type { FeedBatch, FeedChange, Follower } from '../feed-types';
import type { LogChange, LogSource } from './log';

/**
 * One collection's feed from the log (src/db/feed/log.ts): the instance's own channel to `deliver`,
 * the fleet's lasting one to `deliverDerived`. Excluded fields are never handed on.
 */

export interface LogFollowOptions<Doc> {
  exclude: readonly string[];
  deliver(batch: FeedBatch<Doc>): Promise<void>;
  deliverDerived(batch: FeedBatch<Doc>): Promise<void>;
}

function without(doc: Document, fields: readonly string[]): Document {
  const copy = { ...doc };
  for (const field of fields) delete copy[field];
  return copy;
}

export function followLog<Doc>(log: LogSource, collection: string, options: LogFollowOptions<Doc>): Follower {
  const feedChange = (change: LogChange): FeedChange<Doc> => ({
    _id: change._id,
    document: change.after ? (without(change.after, options.exclude) as Doc) : null,
    before: change.before ? (without(change.before, options.exclude) as Doc) : undefined,
    ...(change.inserted ? { inserted: change.inserted } : {}),
  });
  const batchOf = (changes: LogChange[]): FeedBatch<Doc> | undefined => {
    return changes.length > 0 ? { changes: changes.map(feedChange) } : undefined;
  };
  log.follow(collection, 'own', async (changes, gap) => {
    const batch = gap ? { changes: [], unseenChanges: true } : batchOf(changes);
    if (batch) await options.deliver(batch);
  });
  log.follow(collection, 'derived', async (changes) => {
    const batch = batchOf(changes);
    if (batch) await options.deliverDerived(batch);
  });
  return {
    mode: 'log',
    handledBefore: () => undefined,
    hasUnhandled: async () => {
      const { own, derived } = await log.caughtUp();
      return !own || !derived;
    },
    handedOn: () => log.handedOn(),
    underived: () => log.underived(collection),
    lagSeconds: () => log.lagSeconds(),
    // The source is the server's, shared by every collection's feed: it closes it.
    close: async () => undefined,
  };
}
