import type { Collection, Document } from 'mongodb';
import { countForDeletions } from './poll-deletions';
import { positionOf, rangeReads, startingRanges, type Range } from './poll-ranges';
import { FEED_COMMENT, type FeedBatch, type Follower } from '../feed-types';
import type { WatermarkStore } from './watermarks';

/**
 * Following a collection without change streams: one query per interval and per kind of
 * `updated_at` followed (BSON dates, and text in Laravel's form: src/db/feed/range.ts) for
 * documents past that kind's watermark, in (`updated_at`, `_id`) order, at most `batchSize` at a
 * time, on the index `updated_at_1`. The watermark is the last `updated_at` handled and the `_id`s
 * handled with exactly that value, so documents sharing a timestamp (Laravel's are whole seconds)
 * are neither lost nor read twice, whatever type their `_id` is. Idle, each query matches
 * nothing. A backlog (after an outage or a bulk import) is read batch after batch without
 * waiting. Deletions leave nothing to find: a count every `reconcileMs` (longer where counts are
 * slow) notices them (src/db/feed/poll-deletions.ts).
 */

export interface PollSettings {
  intervalMs: number;
  batchSize: number;
  reconcileMs: number;
  /**
   * How far back (of the clock) each poll looks again for a write that carries an earlier time
   * than one already handled but committed after it (a slow transaction, a clock a little behind).
   */
  lookBackMs: number;
}

interface PollOptions<Doc> extends PollSettings {
  maxTimeMS?: number;
  /** False where no listener acts on a deletion: then the collection is never counted (reconcile). */
  reportsDeletions: boolean;
  projection: Document;
  watermarks: WatermarkStore;
  deliver: (batch: FeedBatch<Doc>) => Promise<void>;
  onError: (error: unknown) => void;
}

export async function pollChanges<Doc extends Document>(
  collection: Collection<Doc>,
  options: PollOptions<Doc>,
): Promise<Follower> {
  const { intervalMs, watermarks, deliver, onError } = options;
  const raw = collection as unknown as Collection<Document>;
  const reads = { comment: FEED_COMMENT, ...(options.maxTimeMS ? { maxTimeMS: options.maxTimeMS } : {}) };
  const { ranges, fresh } = await startingRanges(raw, await watermarks.load(), reads);
  const [dates, texts] = ranges as [Range, Range];
  if (fresh) await watermarks.save(positionOf(ranges));
  const deletions = await countForDeletions(raw, {
    ...options,
    reads,
    onUnseenChanges: () => deliver({ changes: [], unseenChanges: true }),
  });
  const read = rangeReads(raw, {
    ...options,
    reads,
    deliver: async (rows) => {
      await deliver({ changes: rows.map((row) => ({ _id: row._id, document: row as unknown as Doc })) });
      deletions.handedOn(rows);
    },
    moved: () => watermarks.save(positionOf(ranges)),
  });
  let caughtUpAt = Date.now();
  /** The instant of the last batch of a range that was full (more waiting), while it is. */
  let behindAt: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let failing = false;

  async function tick(): Promise<void> {
    try {
      const started = Date.now();
      for (const range of ranges) {
        while ((await read.batch(range)) && !closed) behindAt = range.bracket.time(range.mark.at);
        await read.late(range);
      }
      behindAt = undefined;
      caughtUpAt = started;
      await deletions.reconcileIfDue();
      failing = false;
    } catch (error) {
      // The next tick retries from the same watermarks: nothing is skipped by an outage, and it
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
    // Products stamped since then may not be handed on yet: past the watermark, or late.
    handledBefore: () => ({
      date: read.lookBackFrom(dates) as Date,
      text: read.lookBackFrom(texts) as string,
    }),
    hasUnhandled: async () => (await Promise.all(ranges.map(read.unhandled))).some(Boolean),
    lagSeconds: () => (Date.now() - (behindAt ?? caughtUpAt)) / 1000,
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}
