import type { Db, Document } from 'mongodb';
import { pollChanges, type PollSettings } from './feed/poll';
import { streamChanges } from './feed/stream';
import { createWatermarkStore } from './feed/watermarks';
import { freshCheck } from './feed/fresh-check';
import type { FeedBatch, FeedListener, FeedMode, Follower, HandledBefore } from './feed-types';
import type { LogSource } from './feed/log';
import { followLog } from './feed/log-follower';
import type { Underived } from './feed/underived';

/**
 * One change feed per collection: what every derived thing (search grams, caches, totals, live
 * subscriptions) follows, so none of them runs a loop of its own. Change streams where the server
 * has them (a replica set or a sharded cluster); elsewhere (FerretDB, DocumentDB) one indexed
 * query on `updated_at` per interval (src/db/feed/poll.ts). Listeners see the same batches either
 * way; a batch is handled by every listener before the next is read, and the position is saved
 * (src/db/feed/watermarks.ts) only after, so a restart re-reads what was not handled.
 */

export interface ChangeFeed<Doc> {
  readonly collection: string;
  /** Decided once at start: the log where one is given, else a change stream, else polling. */
  readonly mode: FeedMode;
  /** Adds a listener of what this instance keeps (caches, totals, live subscriptions); returns its removal. */
  subscribe(listener: FeedListener<Doc>): () => void;
  /**
   * Adds a listener of what is kept in the database (the grams): from the log, called on the one
   * instance of a fleet that holds the lasting slot, once per change for the fleet; otherwise the
   * same batches as `subscribe`.
   */
  subscribeDerived(listener: FeedListener<Doc>): () => void;
  /**
   * Every document whose `updated_at` (a date, or text of the followed form) is before this has
   * been handed to every listener. Documents written at or after it may not have been: readers
   * that derive from the feed (the search grams) treat them as not yet derived.
   */
  handledBefore(): HandledBefore | undefined;
  /**
   * Whether the collection holds a write not yet handed to every listener (polling: one indexed
   * read past each watermark, matching nothing while the feed is caught up, and within the
   * look-back one of what is stamped before it). What is derived from the whole collection (a
   * total) is exact when it says no. Concurrent callers share one read started after they asked
   * (src/db/feed/fresh-check.ts).
   */
  hasUnhandled(): Promise<boolean>;
  /**
   * Whether this instance's listeners (`subscribe`) have been handed every write committed before
   * the call, waiting a bounded moment for them (the log); true where the feed cannot tell.
   */
  handedOn(): Promise<boolean>;
  /**
   * The log only: once this instance's listeners have every write committed before the call, the
   * `_id`s whose derived state (the search projection) may not be written yet for the fleet;
   * undefined where that is not known (then a search scans). Absent for the other modes.
   */
  underived?(): Promise<Underived | undefined>;
  /** Seconds the feed is behind the database (0 when caught up at its last read). */
  lagSeconds(): number;
  close(): Promise<void>;
}

export interface ChangeFeedOptions extends PollSettings {
  /** Server-side bound of each of the feed's reads (MONGODB_TIMEOUT_MS). */
  maxTimeMS?: number;
  /** Fields left out of every document handed to listeners (e.g. the search grams). */
  exclude?: readonly string[];
  /**
   * Whether listeners are told of deletions (default yes). Polling notices them only by counting
   * the collection (a scan on DocumentDB: ~250 ms at 1,000,000); a feed whose listeners ignore
   * deletions (the live orders) says no and never counts.
   */
  reportsDeletions?: boolean;
  /** The first failure of a run of them (reading, or a listener); the feed retries from its position. */
  onError?: (error: unknown) => void;
  /** The engine's log (src/db/feed/log.ts): where given, the feed follows it instead of the collection. */
  log?: LogSource;
}

/** Whether the deployment has change streams: asked once, by `hello` (no change stream is opened). */
export async function hasChangeStreams(db: Db): Promise<boolean> {
  const hello = await db.admin().command({ hello: 1 });
  return typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
}

/** Starts following `collection`; resolves once its starting position is known. */
export async function openChangeFeed<Doc extends Document>(
  db: Db,
  collection: string,
  options: ChangeFeedOptions,
): Promise<ChangeFeed<Doc>> {
  const listeners = new Set<FeedListener<Doc>>();
  const derivedListeners = new Set<FeedListener<Doc>>();
  const deliverTo = (to: Set<FeedListener<Doc>>) => async (batch: FeedBatch<Doc>) => {
    for (const listener of [...to]) await listener(batch);
  };
  const add = (to: Set<FeedListener<Doc>>) => (listener: FeedListener<Doc>) => {
    to.add(listener);
    return () => to.delete(listener);
  };
  const follower = options.log
    ? followLog<Doc>(options.log, collection, {
        exclude: options.exclude ?? [],
        deliver: deliverTo(listeners),
        deliverDerived: deliverTo(derivedListeners),
      })
    : await followCollection<Doc>(db, collection, options, deliverTo(listeners));
  return {
    collection,
    mode: follower.mode,
    subscribe: add(listeners),
    subscribeDerived: options.log ? add(derivedListeners) : add(listeners),
    handledBefore: follower.handledBefore,
    // The log's check shares its own read of the log's position (src/db/feed/log.ts).
    hasUnhandled: options.log ? follower.hasUnhandled : freshCheck(follower.hasUnhandled),
    handedOn: follower.handedOn ?? (async () => true),
    ...(follower.underived ? { underived: follower.underived } : {}),
    lagSeconds: follower.lagSeconds,
    close: follower.close,
  };
}

/** Change streams where the deployment has them, else polling `updated_at` (the last resort). */
async function followCollection<Doc extends Document>(
  db: Db,
  collection: string,
  options: ChangeFeedOptions,
  deliver: (batch: FeedBatch<Doc>) => Promise<void>,
): Promise<Follower> {
  const projection = Object.fromEntries((options.exclude ?? []).map((field) => [field, 0]));
  const watermarks = createWatermarkStore(db, collection, options.maxTimeMS);
  const onError = options.onError ?? (() => undefined);
  return (await hasChangeStreams(db))
    ? await streamChanges<Doc>(db.collection<Doc>(collection), {
        projection,
        watermarks,
        deliver,
        onError,
        maxTimeMS: options.maxTimeMS,
      })
    : await pollChanges<Doc>(db.collection<Doc>(collection), {
        ...options,
        reportsDeletions: options.reportsDeletions ?? true,
        projection,
        watermarks,
        deliver,
        onError,
      });
}
