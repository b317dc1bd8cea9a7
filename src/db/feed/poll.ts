import type { Collection, Document } from 'mongodb';
import {
  advance,
  compareStamps,
  DATES,
  pastFilter,
  TEXTS,
  untilNow,
  type Bracket,
  type Stamp,
  type Watermark,
} from './range';
import { FEED_COMMENT, type FeedBatch, type Follower } from '../feed-types';
import type { FeedPosition, WatermarkStore } from './watermarks';

/**
 * Following a collection without change streams: one query per interval and per kind of
 * `updated_at` followed (BSON dates, and text in Laravel's form: src/db/feed/range.ts) for
 * documents past that kind's watermark, in (`updated_at`, `_id`) order, at most `batchSize` at a
 * time, on the index `updated_at_1`. The watermark is the last `updated_at` handled and the `_id`s
 * handled with exactly that value, so documents sharing a timestamp (Laravel's are whole seconds)
 * are neither lost nor read twice, whatever type their `_id` is. Idle, each query matches
 * nothing. A backlog (after an outage or a bulk import) is read batch after batch without
 * waiting. Deletions leave nothing to find: a count every `reconcileMs` (longer where counts are
 * slow: RECONCILE_SHARE) notices them (reconcile).
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

/** One kind of `updated_at` followed, and how far. */
interface Range {
  bracket: Bracket;
  mark: Watermark;
  /** What was handed on within the look-back, by (`_id`, `updated_at`): each is handed on once. */
  seen: Map<string, number>;
}

/**
 * A count's interval is at least this many times its duration (0.25 % of a core a feed): at
 * 1,000,000 products a count took ~250 ms, which every 10 s was 2.5 % of a core a feed, and is
 * 0.25 % every 100 s. Deletions then show within that interval (the caches' lifetimes bound them
 * too); at 100,000 (~25 ms a count) the interval stays `reconcileMs`.
 */
const RECONCILE_SHARE = 400;
/**
 * Counts faster than this keep `reconcileMs` whatever the share says: a small collection's count
 * under load (5–15 ms) would otherwise stretch a short interval several-fold.
 */
const SLOW_COUNT_MS = 50;

/** How long after a count of `durationMs` the next one comes. */
function reconcileInterval(reconcileMs: number, durationMs: number): number {
  return durationMs < SLOW_COUNT_MS ? reconcileMs : Math.max(reconcileMs, durationMs * RECONCILE_SHARE);
}

/** Most writes the look-back compares at once (the newest); past it (a bulk write) `hasUnhandled` says yes. */
const MAX_LOOKED_BACK = 2_000;

/** A document's `_id` and `updated_at` as one key (`_id`s of any type: 1 and '1' differ). */
function seenKey(row: Document): string {
  const stamp = row.updated_at instanceof Date ? row.updated_at.getTime() : String(row.updated_at);
  return `${typeof row._id}:${String(row._id)}@${stamp}`;
}

/**
 * How far back the newest write is looked for, nearest first, before the whole range: DocumentDB
 * sorts only `_id` from an index, so a look sorts all its range holds (the whole range took
 * 3.0–3.6 s at 1,000,000 products, past MONGODB_TIMEOUT_MS: a first start failed).
 */
const NEWEST_WITHIN_MS = [60_000, 3_600_000, 86_400_000, 30 * 86_400_000, 365 * 86_400_000];

/** The newest document now: where a feed with no saved position starts (the past is the backfill's). */
async function newest(collection: Collection<Document>, bracket: Bracket, reads: object): Promise<Watermark> {
  const starts = [...NEWEST_WITHIN_MS.map((ms) => bracket.at(Date.now() - ms)), bracket.lowest];
  for (const from of starts) {
    const [row] = await collection
      .find(
        { updated_at: { $gte: from, $lte: untilNow(bracket) } },
        { projection: { _id: 1, updated_at: 1 }, ...reads },
      )
      .sort({ updated_at: -1, _id: -1 })
      .limit(1)
      .toArray();
    if (row) return { at: row.updated_at, idsAt: [row._id] };
  }
  return { at: bracket.lowest, idsAt: [] };
}

/** Where each range resumes: its saved watermark, else the newest document of its kind. */
async function startingRanges(
  collection: Collection<Document>,
  saved: FeedPosition | undefined,
  reads: object,
): Promise<{ ranges: Range[]; fresh: boolean }> {
  const savedMarks: (Watermark | undefined)[] = [
    saved?.updated_at ? { at: saved.updated_at, idsAt: saved.ids_at ?? [] } : undefined,
    saved?.text_updated_at !== undefined
      ? { at: saved.text_updated_at, idsAt: saved.text_ids_at ?? [] }
      : undefined,
  ];
  const ranges = await Promise.all(
    [DATES, TEXTS].map(async (bracket, n) => ({
      bracket,
      mark: savedMarks[n] ?? (await newest(collection, bracket, reads)),
      seen: new Map<string, number>(),
    })),
  );
  return { ranges, fresh: savedMarks.some((mark) => !mark) };
}

export async function pollChanges<Doc extends Document>(
  collection: Collection<Doc>,
  options: PollOptions<Doc>,
): Promise<Follower> {
  const { intervalMs, batchSize, reconcileMs, lookBackMs, projection, watermarks, deliver, onError } =
    options;
  const raw = collection as unknown as Collection<Document>;
  const reads = { comment: FEED_COMMENT, ...(options.maxTimeMS ? { maxTimeMS: options.maxTimeMS } : {}) };
  const { ranges, fresh } = await startingRanges(raw, await watermarks.load(), reads);
  const [dates, texts] = ranges as [Range, Range];
  if (fresh) await watermarks.save(positionOf(ranges));
  let caughtUpAt = Date.now();
  /** The instant of the last batch of a range that was full (more waiting), while it is. */
  let behindAt: number | undefined;
  const countStarted = Date.now();
  let count = options.reportsDeletions ? await raw.countDocuments({}, reads) : 0;
  /** `reconcileMs`, or longer where a count is slow: then counts take at most 1/RECONCILE_SHARE of the time. */
  let reconcileEvery = options.reportsDeletions
    ? reconcileInterval(reconcileMs, Date.now() - countStarted)
    : Infinity;
  /** Documents created since the last count, as seen by the feed. */
  let inserted = new Set<string>();
  let reconciledAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  /** One batch of a range; true when it was full (more may be waiting). */
  async function readBatch(range: Range): Promise<boolean> {
    const rows = await raw
      .find(pastFilter(range.bracket, range.mark), { projection, ...reads })
      .sort({ updated_at: 1, _id: 1 })
      .limit(batchSize)
      .toArray();
    if (rows.length > 0) {
      await deliver({
        changes: rows.map((row) => ({ _id: row._id, document: row as unknown as Doc })),
      });
      if (options.reportsDeletions)
        for (const row of rows) if (isNewSince(row, reconciledAt)) inserted.add(String(row._id));
      remember(range, rows);
      range.mark = advance(range.mark, rows);
      await watermarks.save(positionOf(ranges));
    }
    const full = rows.length === batchSize;
    if (full) behindAt = range.bracket.time(range.mark.at);
    return full;
  }

  function remember(range: Range, rows: readonly Document[]): void {
    const now = Date.now();
    for (const row of rows) range.seen.set(seenKey(row), range.bracket.time(row.updated_at) ?? now);
  }

  /** Where the look-back starts now: `lookBackMs` ago, or the watermark if that is earlier. */
  function lookBackFrom(range: Range): Stamp {
    if (lookBackMs === 0) return range.mark.at;
    const from = range.bracket.at(Date.now() - lookBackMs);
    return compareStamps(from, range.mark.at) < 0 ? from : range.mark.at;
  }

  /**
   * `_id` and `updated_at` of the range's documents stamped within the look-back and before its
   * watermark, newest first, at most `limit`; none (and nothing asked) while the watermark is
   * older than the look-back, as it is when idle. Those not remembered were committed late.
   */
  function lookedBack(range: Range, limit: number): Promise<Document[]> {
    const from = range.bracket.at(Date.now() - lookBackMs);
    if (lookBackMs === 0 || compareStamps(from, range.mark.at) >= 0) return Promise.resolve([]);
    return raw
      .find({ updated_at: { $gte: from, $lt: range.mark.at } }, { projection: { updated_at: 1 }, ...reads })
      .sort({ updated_at: -1, _id: -1 })
      .limit(limit)
      .toArray();
  }

  /** Hands on the range's late writes (the few found are then read whole). */
  async function readLate(range: Range): Promise<void> {
    // Forgotten once below where the look-back now starts (it only moves on): never read again.
    const from = range.bracket.time(range.bracket.at(Date.now() - lookBackMs)) ?? Date.now();
    for (const [key, at] of range.seen) if (at < from) range.seen.delete(key);
    const late = (await lookedBack(range, MAX_LOOKED_BACK)).filter((row) => !range.seen.has(seenKey(row)));
    if (late.length === 0) return;
    const rows = await raw
      .find({ _id: { $in: late.map((row) => row._id) } }, { projection, ...reads })
      .toArray();
    await deliver({ changes: rows.map((row) => ({ _id: row._id, document: row as unknown as Doc })) });
    remember(range, [...late, ...rows]);
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
    reconcileEvery = reconcileInterval(reconcileMs, Date.now() - started);
    const expected = count + inserted.size;
    count = now;
    inserted = new Set();
    reconciledAt = started;
    if (now !== expected) await deliver({ changes: [], unseenChanges: true });
  }

  let failing = false;
  async function tick(): Promise<void> {
    try {
      const started = Date.now();
      for (const range of ranges) {
        while ((await readBatch(range)) && !closed);
        await readLate(range);
      }
      behindAt = undefined;
      caughtUpAt = started;
      if (Date.now() - reconciledAt >= reconcileEvery) await reconcile();
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

  /**
   * Whether a range holds a write not handed on: past its watermark (sorted as the poll reads: a
   * bare findOne was a scan, 150 ms at 100k), or late within the look-back (more than the look-back
   * compares, after a bulk write, counts as unhandled until they age out of it).
   */
  async function unhandledIn(range: Range): Promise<boolean> {
    const [ahead, recent] = await Promise.all([
      raw
        .find(pastFilter(range.bracket, range.mark), { projection: { _id: 1 }, ...reads })
        .sort({ updated_at: 1, _id: 1 })
        .limit(1)
        .toArray(),
      lookedBack(range, MAX_LOOKED_BACK + 1),
    ]);
    return (
      ahead.length > 0 ||
      recent.length > MAX_LOOKED_BACK ||
      recent.some((row) => !range.seen.has(seenKey(row)))
    );
  }

  return {
    mode: 'poll',
    // Products stamped since then may not be handed on yet: past the watermark, or late.
    handledBefore: () => ({ date: lookBackFrom(dates) as Date, text: lookBackFrom(texts) as string }),
    hasUnhandled: async () => (await Promise.all(ranges.map(unhandledIn))).some(Boolean),
    lagSeconds: () => (Date.now() - (behindAt ?? caughtUpAt)) / 1000,
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}

function positionOf([dates, texts]: Range[]): FeedPosition {
  return {
    updated_at: dates!.mark.at as Date,
    ids_at: dates!.mark.idsAt,
    text_updated_at: texts!.mark.at as string,
    text_ids_at: texts!.mark.idsAt,
  };
}

/** Created since `since`: an insert, not an update (a writer's clock error only costs a needless report). */
function isNewSince(row: Document, since: number): boolean {
  const created = DATES.time(row.created_at) ?? TEXTS.time(row.created_at);
  return created !== undefined && created >= since;
}
