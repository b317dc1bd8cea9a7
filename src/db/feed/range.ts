import type { Document, Filter } from 'mongodb';
import type { HandledBefore } from '../feed-types';

/**
 * What the polling feed (src/db/feed/poll.ts) reads of `updated_at`: one range of the index
 * `updated_at_1` per kind of value it follows, each with a watermark of its own. MongoDB compares
 * a value only with values of its own type, so a range of dates never meets a string: BSON dates,
 * and text in the form `YYYY-MM-DD HH:MM:SS[.ffffff]` (Laravel's default, read as UTC), whose
 * order as text is its order in time, are two ranges. Other text (a `T` between date and time, a
 * zone, another form) has no such order and is not followed.
 */

export type Stamp = Date | string;

export interface Bracket {
  /** What it is called where people read it (the bench's output). */
  name: 'date' | 'text';
  /** The instant `ms` (since the epoch) written as this bracket's value. */
  at(ms: number): Stamp;
  /** The instant a value of this bracket stands for; undefined for any other value. */
  time(value: unknown): number | undefined;
  /** Below every value of the bracket: the watermark of a collection that holds none. */
  lowest: Stamp;
}

export const DATES: Bracket = {
  name: 'date',
  at: (ms) => new Date(ms),
  time: (value) => (value instanceof Date ? value.getTime() : undefined),
  lowest: new Date(-8_640_000_000_000_000),
};

/** The followed text form: its text order is its time order (the fraction included). */
const SQL_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?$/;

export const TEXTS: Bracket = {
  name: 'text',
  at: (ms) => new Date(ms).toISOString().slice(0, 19).replace('T', ' '),
  time: (value) =>
    typeof value === 'string' && SQL_DATETIME.test(value)
      ? Date.parse(`${value.replace(' ', 'T')}Z`)
      : undefined,
  // The empty string sorts before every other: the whole string range of the index.
  lowest: '',
};

/** Both in one bracket (the index's order within it). */
export function compareStamps(a: Stamp, b: Stamp): number {
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  const [x, y] = [String(a), String(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Documents stamped at or after `since`, in either bracket (text only up to the future slack: other
 * text, such as ISO 8601 with a `T`, sorts above the followed form and is not followed).
 */
export function writtenSince(since: HandledBefore): Filter<Document> {
  return {
    $or: [{ updated_at: { $gte: since.date } }, { updated_at: { $gte: since.text, $lte: untilNow(TEXTS) } }],
  };
}

/** Whether `updated_at` is at or after `since` (as writtenSince selects). */
export function isWrittenSince(updatedAt: unknown, since: HandledBefore): boolean {
  if (updatedAt instanceof Date) return updatedAt >= since.date;
  if (TEXTS.time(updatedAt) === undefined) return false;
  const text = updatedAt as string;
  return text >= since.text && text <= (untilNow(TEXTS) as string);
}

/** The last stamp handled, and the `_id`s handled with exactly that stamp. */
export interface Watermark {
  at: Stamp;
  idsAt: unknown[];
}

/** Documents stamped further ahead than this are left until their time comes (a wrong clock must not move the watermark past every later write). */
export const FUTURE_SLACK_MS = 60_000;
/** Most `_id`s remembered for one stamp; past it (a bulk write in one second) `_id` order continues. */
const MAX_IDS_AT = 1_000;

/** The bracket's values not yet past the future slack. */
export function untilNow(bracket: Bracket, now = Date.now()): Stamp {
  return bracket.at(now + FUTURE_SLACK_MS);
}

/** The bracket's documents past the watermark (and not too far ahead). */
export function pastFilter(bracket: Bracket, { at, idsAt }: Watermark): Filter<Document> {
  const until = untilNow(bracket);
  if (idsAt.length === 0) return { updated_at: { $gte: at, $lte: until } };
  // `_id`s of any type: the driver's typing assumes ObjectIds.
  const sameInstant: Document =
    idsAt.length < MAX_IDS_AT ? { _id: { $nin: idsAt } } : { _id: { $gt: idsAt[idsAt.length - 1] } };
  return {
    $or: [{ updated_at: { $gt: at, $lte: until } }, { updated_at: at, ...sameInstant }],
  } as Filter<Document>;
}

/** The watermark after `rows` (read in (`updated_at`, `_id`) order) were handled. */
export function advance(mark: Watermark, rows: readonly Document[]): Watermark {
  let { at, idsAt } = mark;
  for (const row of rows) {
    const rowAt = row.updated_at as Stamp;
    if (compareStamps(rowAt, at) !== 0) {
      at = rowAt;
      idsAt = [];
    }
    idsAt = idsAt.length < MAX_IDS_AT ? [...idsAt, row._id] : [...idsAt.slice(1), row._id];
  }
  return { at, idsAt };
}
