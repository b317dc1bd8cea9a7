import type { Underived } from './feed/underived';

/** What a change feed hands on (src/db/change-feed.ts), shared by the ways of following one. */

/** The `comment` on every command a feed (and what follows it in the background) sends: in the server's logs and profiles, and filtered out where tests count a request's commands. */
export const FEED_COMMENT = 'change feed';

export interface FeedChange<Doc> {
  /** The document's `_id`, of whatever type its writer chose. */
  _id: unknown;
  /** The document now (with the feed's projection); null when it was deleted. */
  document: Doc | null;
  /** The document before the change, where the source knows it (the log); absent for an insert. */
  before?: Doc;
  /** The log only: the document is new (without it, a missing `before` may be one not known). */
  inserted?: true;
}

export interface FeedBatch<Doc> {
  changes: FeedChange<Doc>[];
  /**
   * Documents may have been deleted (or written) without being seen one by one: everything
   * derived from the collection as a whole (totals, cached lists) is to be dropped.
   */
  unseenChanges?: boolean;
}

export type FeedListener<Doc> = (batch: FeedBatch<Doc>) => Promise<void> | void;

/**
 * Where what the feed handed on ends: every document whose `updated_at` is a date before `date`,
 * or text of the followed form (src/db/feed/range.ts) before `text`, was handed to every listener.
 */
export interface HandledBefore {
  date: Date;
  text: string;
}

/** How a feed follows its collection: the engine's log, a change stream, or polling `updated_at`. */
export type FeedMode = 'log' | 'stream' | 'poll';

/** What a way of following changes gives the feed. */
export interface Follower {
  mode: FeedMode;
  handledBefore(): HandledBefore | undefined;
  hasUnhandled(): Promise<boolean>;
  /** The log only: whether this instance's listeners have everything committed before the call. */
  handedOn?(): Promise<boolean>;
  /** The log only: the `_id`s whose derived state may not be written yet (src/db/feed/underived.ts). */
  underived?(): Promise<Underived | undefined>;
  lagSeconds(): number;
  close(): Promise<void>;
}
