import type { Collection, Document, Filter } from 'mongodb';
import { FEED_COMMENT, type FeedBatch, type Follower } from './change-feed';
import type { FeedPosition, WatermarkStore } from './feed-watermarks';

/**
 * Following a collection without change streams: one query per interval for documents whose
 * `updated_at` (a BSON date) is past the watermark, in (`updated_at`, `_id`) order, at most
 * `batchSize` at a time, on the index `updated_at_1`. The watermark is the last `updated_at`
 * handled and the `_id`s handled with exactly that value, so documents sharing a timestamp
 * (Laravel's are whole seconds) are neither lost nor read twice, whatever type their `_id` is.
 * Idle, the query matches nothing. A backlog (after an outage or a bulk import) is read batch
 * after batch without waiting. Deletions leave nothing to find: a count every `reconcileMs`
 * notices them (see reconcile below).
 */

export interface PollSettings {
  intervalMs: number;
  batchSize: number;
  reconcileMs: number;
}

interface PollOptions<Doc> extends PollSettings {
  maxTimeMS?: number;
  projection: Document;
  watermarks: WatermarkStore;
  deliver: (batch: FeedBatch<Doc>) => Promise<void>;
  onError: (error: unknown) => void;
}

/** Documents stamped further ahead than this are left until their time comes (a wrong clock must not move the watermark past every later write). */
const FUTURE_SLACK_MS = 60_000;
/** Most `_id`s remembered for one timestamp; past it (a bulk write in one second) `_id` order continues. */
const MAX_IDS_AT = 1_000;
const EARLIEST = new Date(-8_640_000_000_000_000);

interface Watermark {
  at: Date;
  idsAt: unknown[];
}

/** The newest document now: where a feed with no saved position starts (the past is the backfill's). */
async function newest(collection: Collection<Document>, reads: object): Promise<Watermark> {
  const [row] = await collection
    .find({ updated_at: { $type: 'date' } }, { projection: { _id: 1, updated_at: 1 }, ...reads })
    .sort({ updated_at: -1, _id: -1 })
    .limit(1)
    .toArray();
  return row ? { at: row.updated_at as Date, idsAt: [row._id] } : { at: EARLIEST, idsAt: [] };
}

function pastFilter({ at, idsAt }: Watermark): Filter<Document> {
  // `_id`s of any type: the driver's typing assumes ObjectIds.
  const until = new Date(Date.now() + FUTURE_SLACK_MS);
  if (idsAt.length === 0) return { updated_at: { $gte: at, $lte: until } };
  const sameInstant: Document =
    idsAt.length < MAX_IDS_AT ? { _id: { $nin: idsAt } } : { _id: { $gt: idsAt[idsAt.length - 1] } };
  return {
    $or: [{ updated_at: { $gt: at, $lte: until } }, { updated_at: at, ...sameInstant }],
  } as Filter<Document>;
}

function advance(mark: Watermark, rows: readonly Document[]): Watermark {
  let { at, idsAt } = mark;
  for (const row of rows) {
    const rowAt = row.updated_at as Date;
    if (rowAt.getTime() !== at.getTime()) {
      at = rowAt;
      idsAt = [];
    }
    idsAt = idsAt.length < MAX_IDS_AT ? [...idsAt, row._id] : [...idsAt.slice(1), row._id];
  }
  return { at, idsAt };
}

export async function pollChanges<Doc extends Document>(
  collection: Collection<Doc>,
  options: PollOptions<Doc>,
): Promise<Follower> {
  const { intervalMs, batchSize, reconcileMs, projection, watermarks, deliver, onError } = options;
  const raw = collection as unknown as Collection<Document>;
  const reads = { comment: FEED_COMMENT, ...(options.maxTimeMS ? { maxTimeMS: options.maxTimeMS } : {}) };
  const saved = await watermarks.load();
  let mark: Watermark = saved?.updated_at
    ? { at: saved.updated_at, idsAt: saved.ids_at ?? [] }
    : await newest(raw, reads);
  if (!saved?.updated_at) await watermarks.save(positionOf(mark));
  let caughtUpAt = Date.now();
  let behind = false;
  let count = await raw.countDocuments({}, reads);
  /** Documents created since the last count, as seen by the feed. */
  let inserted = new Set<string>();
  let reconciledAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  /** One batch; true when it was full (more may be waiting). */
  async function readBatch(): Promise<boolean> {
    const started = Date.now();
    const rows = await raw
      .find(pastFilter(mark), { projection, ...reads })
      .sort({ updated_at: 1, _id: 1 })
      .limit(batchSize)
      .toArray();
    if (rows.length > 0) {
      await deliver({
        changes: rows.map((row) => ({ _id: row._id, document: row as unknown as Doc })),
      });
      for (const row of rows) if (isNewSince(row, reconciledAt)) inserted.add(String(row._id));
      mark = advance(mark, rows);
      await watermarks.save(positionOf(mark));
    }
    behind = rows.length === batchSize;
    if (!behind) caughtUpAt = started;
    return behind;
  }

  /**
   * A deletion changes the count by one that no document seen explains. Inserts seen are those
   * created since the last count; anything else that moved the count (a deletion, an insert
   * without `created_at` or with an old one) is reported as unseen changes. A deletion hidden by
   * such an insert in the same interval is bounded by the cache lifetimes instead.
   */
  async function reconcile(): Promise<void> {
    const started = Date.now();
    const now = await raw.countDocuments({}, reads);
    const expected = count + inserted.size;
    count = now;
    inserted = new Set();
    reconciledAt = started;
    if (now !== expected) await deliver({ changes: [], unseenChanges: true });
  }

  let failing = false;
  async function tick(): Promise<void> {
    try {
      while ((await readBatch()) && !closed);
      if (Date.now() - reconciledAt >= reconcileMs) await reconcile();
      failing = false;
    } catch (error) {
      // The next tick retries from the same watermark: nothing is skipped by an outage, and it
      // is told once, not every second.
      if (!failing) onError(error);
      failing = true;
    }
  }

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      running = tick().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    mode: 'poll',
    handledBefore: () => mark.at,
    // Sorted as the poll reads: a bare findOne was a scan of the collection (150 ms at 100k).
    hasUnhandled: async () =>
      (
        await raw
          .find(pastFilter(mark), { projection: { _id: 1 }, ...reads })
          .sort({ updated_at: 1, _id: 1 })
          .limit(1)
          .toArray()
      ).length > 0,
    lagSeconds: () => (behind ? Date.now() - mark.at.getTime() : Date.now() - caughtUpAt) / 1000,
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}

function positionOf(mark: Watermark): FeedPosition {
  return { updated_at: mark.at, ids_at: mark.idsAt };
}

/** Created since `since`: an insert, not an update (a writer's clock error only costs a needless report). */
function isNewSince(row: Document, since: number): boolean {
  const created = row.created_at;
  return created instanceof Date && created.getTime() >= since;
}
