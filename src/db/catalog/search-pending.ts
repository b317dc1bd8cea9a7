import { ObjectId } from 'mongodb';

/**
 * A search page while products written moments ago may carry stale grams: those "pending"
 * products (written since the change feed's position) are matched by the regexes alone, the rest
 * through the grams with the pending ones left out, and the two reads are merged in `_id` order.
 * The pending matches are few (they cost in proportion to how many products were written since
 * the last poll), so all of them are read; the gram read is shifted so the merge covers the page.
 */

/** Past this many pending matches a search reads as a scan: still exact, and rare (a backlog). */
export const MAX_PENDING = 1_000;

interface Row {
  _id?: unknown;
}

/** BSON order of the `_id` types writers use: numbers, then strings, then ObjectIds. */
function rank(id: unknown): number {
  if (typeof id === 'number' || typeof id === 'bigint') return 1;
  if (typeof id === 'string') return 2;
  if (id instanceof ObjectId) return 7;
  return 10;
}

export function compareIds(a: unknown, b: unknown): number {
  const byType = rank(a) - rank(b);
  if (byType !== 0) return byType;
  if (a instanceof ObjectId && b instanceof ObjectId)
    return a.toHexString() < b.toHexString() ? -1 : a.equals(b) ? 0 : 1;
  const [x, y] = [a as number | string, b as number | string];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Two lists sorted ascending by `_id` as one; a row in both is kept once (the right one, read later). */
export function mergeById<T extends Row>(left: readonly T[], right: readonly T[]): T[] {
  const merged: T[] = [];
  let [i, j] = [0, 0];
  while (i < left.length || j < right.length) {
    const order = i >= left.length ? 1 : j >= right.length ? -1 : compareIds(left[i]!._id, right[j]!._id);
    if (order < 0) merged.push(left[i++]!);
    else {
      if (order === 0) i++;
      merged.push(right[j++]!);
    }
  }
  return merged;
}

/**
 * Where to read the gram matches for an offset page: from `skip - pending` (the page can hold
 * no more pending rows than there are), enough rows to reach the page's end.
 */
export function gramWindow(skip: number, limit: number, pending: number): { skip: number; limit: number } {
  const from = Math.max(0, skip - pending);
  return { skip: from, limit: limit + (skip - from) };
}

/**
 * The page `skip … skip + limit` of the merged order, from the gram rows read at `gramSkip`
 * (gramWindow) and every pending match. Undefined when the gram rows start past their end (the
 * page lies beyond the last gram match): then `tailPage` places it.
 */
export function offsetPage<T extends Row>(
  gramRows: readonly T[],
  gramSkip: number,
  pending: readonly T[],
  skip: number,
  limit: number,
): T[] | undefined {
  if (gramSkip === 0) return mergeById(gramRows, pending).slice(skip, skip + limit);
  const first = gramRows[0];
  if (!first) return undefined;
  // Pending rows before the first gram row read sit among the gram rows skipped.
  const before = pending.filter((row) => compareIds(row._id, first._id) < 0).length;
  const merged = mergeById(gramRows, pending.slice(before));
  const start = skip - (gramSkip + before);
  return merged.slice(start, start + limit);
}

/**
 * The page when it lies past the last gram match: the merged order's last rows come from the
 * gram matches' last `pending.length` (`gramTail`, ascending) and the pending ones.
 */
export function tailPage<T extends Row>(
  gramTail: readonly T[],
  gramTotal: number,
  pending: readonly T[],
  skip: number,
  limit: number,
): T[] {
  const merged = mergeById(gramTail, pending);
  const start = gramTotal + pending.length - merged.length;
  return merged.slice(Math.max(0, skip - start), Math.max(0, skip - start) + limit);
}
