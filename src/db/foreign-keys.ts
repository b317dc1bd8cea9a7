import type { Collection, Document, Filter } from 'mongodb';

/**
 * Documents keyed by another writer. The gateway keys a product by `_id = id` and an order by
 * `_id = ulid`, so every list order and keyset bound is a walk of the primary key, the one order
 * DocumentDB reads from an index. Another application's document has its own `_id` (an ObjectId
 * by default): outside the range of the gateway's keys, so it sorts above (or below) all of them
 * and a range on `_id` never selects it. Such documents are found by walking the primary key from
 * both ends until the first key of the gateway's own shape, and merged into each page by their
 * `id` or `ulid`: their cost grows with their number, not the collection's.
 */

/** Foreign documents merged per page at most; more and lists sort the whole filter by the field. */
export const FOREIGN_BUDGET = 1_000;

/** How long one walk's answer is reused (a document written with its own `_id` is listed within it). */
export const FOREIGN_RECHECK_MS = 1_000;

export interface ForeignKey<V> {
  key: unknown;
  /** The `id` or `ulid` the document is listed by. */
  value: V;
}

/**
 * Either the foreign documents' keys, ascending by value, with how many of them sort above and
 * below the gateway's own keys in `_id` order; or `overflow` (more than the budget).
 */
export type ForeignKeys<V> =
  { overflow: false; keys: ForeignKey<V>[]; above: number; below: number } | { overflow: true };

/** The probe's reads carry this comment, so tests counting a request's reads can tell them apart. */
export const FOREIGN_KEY_PROBE = 'foreign-key-probe';

export interface KeyShape<V> {
  /** The field the gateway copies into `_id`. */
  field: 'id' | 'ulid';
  /** Whether an `_id` is in the gateway's own shape (a number; a ULID). */
  isOwnKey(key: unknown): boolean;
  /** The field's value if usable for ordering; a document without one cannot be listed. */
  valueOf(raw: unknown): V | undefined;
}

const WALK_BATCH = 64;

/**
 * Walks `_id` from one end while the keys are foreign; undefined when over the budget. A few
 * rows per round trip: a collection of only own keys costs one small read a side.
 */
async function walkEnd<V>(
  collection: Collection<Document>,
  shape: KeyShape<V>,
  direction: 1 | -1,
  reads: object,
): Promise<{ keys: ForeignKey<V>[]; ownReached: boolean } | undefined> {
  const options = {
    projection: { _id: 1, [shape.field]: 1 },
    hint: '_id_',
    comment: FOREIGN_KEY_PROBE,
    ...reads,
  };
  // The common case first: one row, one reply, no cursor left open on the server.
  const [end] = await collection.find({}, options).sort({ _id: direction }).limit(1).toArray();
  if (end === undefined || shape.isOwnKey(end._id)) return { keys: [], ownReached: end !== undefined };
  // The limit keeps the plan a walk of the key: without one, PostgreSQL sorted the whole table.
  const cursor = collection
    .find({}, options)
    .sort({ _id: direction })
    .limit(FOREIGN_BUDGET + 1)
    .batchSize(WALK_BATCH);
  const keys: ForeignKey<V>[] = [];
  let seen = 0;
  try {
    for await (const doc of cursor) {
      if (shape.isOwnKey(doc._id)) return { keys, ownReached: true };
      if (++seen > FOREIGN_BUDGET) return undefined;
      const value = shape.valueOf(doc[shape.field]);
      if (value !== undefined) keys.push({ key: doc._id, value });
    }
    return { keys, ownReached: false };
  } finally {
    await cursor.close();
  }
}

function compare<V>(a: V, b: V): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export async function findForeignKeys<V>(
  collection: Collection<Document>,
  shape: KeyShape<V>,
  reads: object = {},
): Promise<ForeignKeys<V>> {
  const [top, bottom] = await Promise.all([
    walkEnd(collection, shape, -1, reads),
    walkEnd(collection, shape, 1, reads),
  ]);
  if (top === undefined || bottom === undefined) return { overflow: true };
  // No own key at all: both walks saw every document.
  if (!top.ownReached) return { overflow: false, keys: sorted(top.keys), above: top.keys.length, below: 0 };
  if (top.keys.length + bottom.keys.length > FOREIGN_BUDGET) return { overflow: true };
  return {
    overflow: false,
    keys: sorted([...top.keys, ...bottom.keys]),
    above: top.keys.length,
    below: bottom.keys.length,
  };
}

function sorted<V>(keys: ForeignKey<V>[]): ForeignKey<V>[] {
  return keys.sort((a, b) => compare(a.value, b.value));
}

/** findForeignKeys, reused for FOREIGN_RECHECK_MS and shared by every request of one repository. */
export function foreignKeyProbe<V>(collection: Collection<Document>, shape: KeyShape<V>, reads: object = {}) {
  let probe: { at: number; answer: Promise<ForeignKeys<V>> } | undefined;
  return function foreignKeys(): Promise<ForeignKeys<V>> {
    const now = performance.now();
    if (!probe || now - probe.at >= FOREIGN_RECHECK_MS) {
      const answer = findForeignKeys(collection, shape, reads);
      probe = { at: now, answer };
      // A failed walk is not remembered: the next request asks again.
      answer.catch(() => {
        if (probe?.answer === answer) probe = undefined;
      });
    }
    return probe.answer;
  };
}

/** Bounds on a field's value; both exclusive. */
export interface ValueRange<V> {
  after?: V;
  before?: V;
}

export function keysWithin<V extends string | number>(
  keys: ForeignKey<V>[],
  { after, before }: ValueRange<V>,
): unknown[] {
  return keys
    .filter(({ value }) => (after === undefined || value > after) && (before === undefined || value < before))
    .map(({ key }) => key);
}

/** `filter` limited to the documents with these keys. */
export function amongKeys<T extends Document>(filter: Filter<T>, keys: unknown[]): Filter<T> {
  const among = { _id: { $in: keys } } as Filter<T>;
  return Object.keys(filter).length === 0 ? among : ({ $and: [filter, among] } as Filter<T>);
}

/**
 * One window from the own-keyed rows and the foreign rows (each already in `direction` order by
 * `valueOf`, each at most `limit`): the first `limit` of both, one row per value (the own-keyed
 * row wins).
 */
export function mergeWindow<T, V>(
  own: T[],
  foreign: T[],
  valueOf: (row: T) => V,
  direction: 1 | -1,
  limit: number,
): T[] {
  if (foreign.length === 0) return own;
  const values = new Set(own.map(valueOf));
  const rows = [...own, ...foreign.filter((row) => !values.has(valueOf(row)))];
  return rows.sort((a, b) => direction * compare(valueOf(a), valueOf(b))).slice(0, limit);
}

/**
 * The rows at positions [skip, skip + limit) of the merged order, from `own` (the own-keyed rows
 * from rank `ownSkip`, ascending) and the values of every foreign match (ascending). Foreign rows
 * are named by value; the caller fetches them.
 */
export function pageSlots<T, V extends string | number>(
  own: T[],
  ownSkip: number,
  foreignValues: V[],
  valueOf: (row: T) => V,
  skip: number,
  limit: number,
): ({ own: T } | { foreign: V })[] {
  const slots: { position: number; slot: { own: T } | { foreign: V } }[] = [];
  const ownValues = new Set(own.map(valueOf));
  // A value both keyed ways is listed once, as the own-keyed row.
  const foreign = foreignValues.filter((value) => !ownValues.has(value));
  const foreignBelow = (value: V) => foreign.filter((other) => other < value).length;
  own.forEach((row, index) => {
    slots.push({ position: ownSkip + index + foreignBelow(valueOf(row)), slot: { own: row } });
  });
  const firstOwn = own.length > 0 ? valueOf(own[0]!) : undefined;
  foreign.forEach((value, rank) => {
    // Before the first fetched own row: at a position before `skip` unless no own row was skipped.
    if (ownSkip > 0 && (firstOwn === undefined || value < firstOwn)) return;
    const ownBelow = own.filter((row) => valueOf(row) < value).length;
    slots.push({ position: rank + ownSkip + ownBelow, slot: { foreign: value } });
  });
  return slots
    .filter(({ position }) => position >= skip && position < skip + limit)
    .sort((a, b) => a.position - b.position)
    .map(({ slot }) => slot);
}
