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
import type { FeedPosition } from './watermarks';

/** One kind of `updated_at` followed, and how far. */
export interface Range {
  bracket: Bracket;
  mark: Watermark;
  /** What was handed on within the look-back, by (`_id`, `updated_at`): each is handed on once. */
  seen: Map<string, number>;
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
export async function startingRanges(
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

export function positionOf([dates, texts]: Range[]): FeedPosition {
  return {
    updated_at: dates!.mark.at as Date,
    ids_at: dates!.mark.idsAt,
    text_updated_at: texts!.mark.at as string,
    text_ids_at: texts!.mark.idsAt,
  };
}

export interface RangeReadOptions {
  batchSize: number;
  lookBackMs: number;
  projection: Document;
  reads: object;
  /** Hands on documents read whole (a batch past the watermark, or late ones). */
  deliver: (rows: Document[]) => Promise<void>;
  /** Called after a batch moved a range's watermark. */
  moved: () => Promise<void>;
}

/** The reads of one range: a batch past its watermark, the late writes within the look-back, and whether any waits. */
export function rangeReads(raw: Collection<Document>, options: RangeReadOptions) {
  const { batchSize, lookBackMs, projection, reads, deliver, moved } = options;

  function remember(range: Range, rows: readonly Document[]): void {
    const now = Date.now();
    for (const row of rows) range.seen.set(seenKey(row), range.bracket.time(row.updated_at) ?? now);
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

  return {
    /** One batch past the watermark; true when it was full (more may be waiting). */
    async batch(range: Range): Promise<boolean> {
      const rows = await raw
        .find(pastFilter(range.bracket, range.mark), { projection, ...reads })
        .sort({ updated_at: 1, _id: 1 })
        .limit(batchSize)
        .toArray();
      if (rows.length > 0) {
        await deliver(rows);
        remember(range, rows);
        range.mark = advance(range.mark, rows);
        await moved();
      }
      return rows.length === batchSize;
    },

    /** Hands on the range's late writes (the few found are then read whole). */
    async late(range: Range): Promise<void> {
      // Forgotten once below where the look-back now starts (it only moves on): never read again.
      const from = range.bracket.time(range.bracket.at(Date.now() - lookBackMs)) ?? Date.now();
      for (const [key, at] of range.seen) if (at < from) range.seen.delete(key);
      const late = (await lookedBack(range, MAX_LOOKED_BACK)).filter((row) => !range.seen.has(seenKey(row)));
      if (late.length === 0) return;
      const rows = await raw
        .find({ _id: { $in: late.map((row) => row._id) } }, { projection, ...reads })
        .toArray();
      await deliver(rows);
      remember(range, [...late, ...rows]);
    },

    /** Where the look-back starts now: `lookBackMs` ago, or the watermark if that is earlier. */
    lookBackFrom(range: Range): Stamp {
      if (lookBackMs === 0) return range.mark.at;
      const from = range.bracket.at(Date.now() - lookBackMs);
      return compareStamps(from, range.mark.at) < 0 ? from : range.mark.at;
    },

    /**
     * Whether a range holds a write not handed on: past its watermark (sorted as the poll reads: a
     * bare findOne was a scan, 150 ms at 100k), or late within the look-back (more than the look-back
     * compares, after a bulk write, counts as unhandled until they age out of it).
     */
    async unhandled(range: Range): Promise<boolean> {
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
    },
  };
}
