import type { Document } from 'mongodb';
import { countMatch, readableMatch, type Match } from '../catalog/filter-match';
import type { FeedBatch, FeedChange } from '../feed-types';
import { criteriaOfKey } from '../catalog/kept-count';
import { GROUPINGS, tallyKey, type GroupTally, type Grouping } from '../catalog/product-groups';
import type { ProductCriteria } from '../catalog/product-plans';
import type { ChangeFeed } from '../change-feed';
import { movesLists } from './product-changes';
import { DROP, type TotalCache, type TotalMove } from '../catalog/total-cache';

/**
 * How a batch of product changes moves the kept totals (src/db/catalog/total-cache.ts), from each change's
 * document before and after it: −1 where the filter matched the one before, +1 where it matches
 * the one after (a deletion has no after, an insert no before). A change whose before is not
 * known (the log sent none), or that a filter cannot be matched against for sure
 * (src/db/catalog/filter-match.ts), drops that total instead: it is counted again when next asked.
 */

/** The document before a change: absent for an insert, undefined where it is not known. */
function beforeOf(change: FeedChange<Document>): Document | null | undefined {
  return change.before ?? (change.inserted ? null : undefined);
}

/** How a filter's total moves by one document leaving (before) or arriving (after). */
function term(criteria: ProductCriteria, doc: Document | null): Match | 0 {
  return doc === null ? 0 : countMatch(criteria, doc);
}

function moveTotal(criteria: ProductCriteria, total: number, changes: FeedChange<Document>[]): unknown {
  let moved = total;
  for (const change of changes) {
    const before = beforeOf(change);
    if (before === undefined) return DROP;
    const left = term(criteria, before);
    const arrived = term(criteria, change.document);
    if (left === 'unsure' || arrived === 'unsure') return DROP;
    moved += (arrived === true ? 1 : 0) - (left === true ? 1 : 0);
  }
  return moved;
}

/** The tally row a document is counted in: null where it is in none, 'unsure' where unknown. */
export function groupRowOf(grouping: Grouping, doc: Document | null): string | null | 'unsure' {
  if (doc === null) return null;
  const readable = readableMatch(doc);
  if (readable !== true) return readable === false ? null : 'unsure';
  const { key, name } = GROUPINGS[grouping];
  // An array is grouped as a whole, which the tally's text rows do not model.
  if (Array.isArray(doc[key]) || Array.isArray(doc[name])) return 'unsure';
  return tallyKey(doc[key], doc[name]) ?? null;
}

function moveTally(grouping: Grouping, tally: GroupTally, changes: FeedChange<Document>[]): unknown {
  const moved = new Map(tally);
  for (const change of changes) {
    const before = beforeOf(change);
    if (before === undefined) return DROP;
    const left = groupRowOf(grouping, before);
    const arrived = groupRowOf(grouping, change.document);
    if (left === 'unsure' || arrived === 'unsure') return DROP;
    if (left !== null) {
      const count = moved.get(left);
      // A product the tally never counted: it is not what the database counted, so count again.
      if (count === undefined) return DROP;
      if (count > 1) moved.set(left, count - 1);
      else moved.delete(left);
    }
    if (arrived !== null) moved.set(arrived, (moved.get(arrived) ?? 0) + 1);
  }
  return moved;
}

/** The move of every kept total by `batch`; a batch with unseen changes moves none (drop them all). */
export function totalMoveOf(batch: FeedBatch<Document>): TotalMove | undefined {
  if (batch.unseenChanges) return undefined;
  const { changes } = batch;
  return (key, value) => {
    if (Object.hasOwn(GROUPINGS, key)) return moveTally(key as Grouping, value as GroupTally, changes);
    const criteria = criteriaOfKey(key);
    return criteria && typeof value === 'number' ? moveTotal(criteria, value, changes) : DROP;
  };
}

/**
 * Keeps `totals` following the products' feed: from the log, each batch moves them; from any other
 * source (no document before a change), a batch that may move a product into or out of a list
 * drops them all.
 */
export function followTotals(
  feed: Pick<ChangeFeed<Document>, 'mode' | 'subscribe'>,
  totals: TotalCache,
): void {
  feed.subscribe((batch) => {
    const move = feed.mode === 'log' ? totalMoveOf(batch) : undefined;
    if (move) totals.move(move);
    else if (movesLists(batch)) totals.invalidate();
  });
}
