import { Decimal128, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countMatch, listMatch, type Match } from '../../src/db/catalog/filter-match';
import { countGroups, tallyOf, type GroupTally } from '../../src/db/catalog/product-groups';
import { countFilter, productFilter, SCAN, type ProductCriteria } from '../../src/db/catalog/product-plans';
import { groupRowOf } from '../../src/db/derived/total-moves';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * The JavaScript matcher that moves kept totals and spares cached answers agrees with the
 * database's own `$match` of the same filter, over random documents in the shapes other writers
 * leave: arrays (nested too), numbers, booleans, null, missing fields, objects, mixed case, regex
 * metacharacters and letters outside ASCII. Where it says 'unsure' the caller drops what it would
 * have moved, so only its sure answers are checked (and most answers must be sure).
 */

let state = 20_261_128;
const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;

const TEXTS = [
  'Gift Card',
  'gift',
  'GIFT',
  'a.b',
  'axb',
  'c+d',
  '(x)',
  '[y]',
  'cost $5',
  'back\\slash',
  'Café',
  'CAFÉ',
  'Kelvin \u212a',
  'ſale',
  'Star*',
  'Games',
  'games',
  '',
];
const WORDS = [
  'gift',
  'GiFt',
  'a.b',
  'c+d',
  '(x)',
  '[y]',
  '$5',
  '\\',
  '*',
  'café',
  'k',
  'sale',
  'ame',
  'ard',
  'x',
];
const CATEGORIES = ['games', 'Games', 'gift card', 'software'];

function value(depth = 0): unknown {
  const kind = pick(['text', 'text', 'text', 'number', 'bool', 'null', 'array', 'object', 'decimal', 'date']);
  if (kind === 'text') return pick(TEXTS);
  if (kind === 'number') return pick([0, 5, 2.5, -1]);
  if (kind === 'bool') return random() < 0.5;
  if (kind === 'null') return null;
  if (kind === 'decimal') return Decimal128.fromString('12.50');
  if (kind === 'date') return new Date(0);
  if (kind === 'object') return { text: pick(TEXTS) };
  return depth > 1 ? [] : Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
}

function randomProduct(id: number): Document {
  const doc: Document = { _id: id, id };
  for (const field of ['name', 'short_description', 'brand_name', 'category_name', 'tags', 'brand_id'])
    if (random() < 0.85) doc[field] = value();
  if (random() < 0.8) doc.category_key = random() < 0.6 ? pick(CATEGORIES) : value();
  // Every shape keeps its own variant id (a unique index).
  const amount = value();
  doc.variant = pick([
    { id, price: { amount } },
    { id, price: { amount } },
    { id, price: amount },
    [{ id, price: { amount } }],
  ]);
  return doc;
}

function randomCriteria(): ProductCriteria {
  const words = Array.from({ length: Math.floor(random() * 3) }, () => pick(WORDS));
  return random() < 0.4 ? { words, category: pick(CATEGORIES) } : { words };
}

let database: TestDatabase;
let docs: Document[];

beforeAll(async () => {
  database = await openTestDatabase('filter-match');
  const products = database.db.collection<Document>('products');
  await products.insertMany(Array.from({ length: 400 }, (_, i) => randomProduct(i + 1)));
  // As the driver (and the log) decodes them.
  docs = await products.find({}).toArray();
});

afterAll(async () => {
  await database?.close();
});

async function idsMatching(filter: Document): Promise<Set<unknown>> {
  const rows = await database.db
    .collection('products')
    .find(filter, { projection: { _id: 1 } })
    .toArray();
  return new Set(rows.map((row) => row._id));
}

function compare(matcher: (doc: Document) => Match, matched: Set<unknown>) {
  let sure = 0;
  for (const doc of docs) {
    const match = matcher(doc);
    if (match === 'unsure') continue;
    sure++;
    expect({ doc, match }).toEqual({ doc, match: matched.has(doc._id) });
  }
  return sure;
}

describe('the JavaScript matcher agrees with the database', () => {
  it('on lists and totals of 60 random filters over 400 random documents', async () => {
    let sure = 0;
    let checked = 0;
    for (let round = 0; round < 60; round++) {
      const criteria = randomCriteria();
      sure += compare(
        (doc) => listMatch(criteria, doc),
        await idsMatching(productFilter(criteria) as Document),
      );
      sure += compare(
        (doc) => countMatch(criteria, doc),
        await idsMatching(countFilter(criteria, SCAN) as Document),
      );
      checked += 2 * docs.length;
    }
    expect(sure / checked).toBeGreaterThan(0.7);
  });

  it('on the rows of the counts by category and by brand', async () => {
    for (const grouping of ['categories', 'brands'] as const) {
      const rows = docs.map((doc) => groupRowOf(grouping, doc));
      const sure = rows.filter((row): row is string | null => row !== 'unsure');
      const tally = new Map<string, number>();
      for (const row of sure) if (row !== null) tally.set(row, (tally.get(row) ?? 0) + 1);
      const stored = await countGroups(database.db.collection('products'), grouping, {});
      const unsureIds = docs.filter((_, i) => rows[i] === 'unsure').map((doc) => doc._id);
      // The rows the unsure documents are counted in, from the database: the rest must be equal.
      const theirs = tallyOf(
        await database.db
          .collection('products')
          .aggregate<{ _id: { key?: unknown; name?: unknown }; productCount: number }>([
            { $match: { _id: { $in: unsureIds } } },
            { $match: countFilter({ words: [] }, SCAN) as Document },
            {
              $group: {
                _id: {
                  key: `$${grouping === 'categories' ? 'category_key' : 'brand_id'}`,
                  name: `$${grouping === 'categories' ? 'category_name' : 'brand_name'}`,
                },
                productCount: { $sum: 1 },
              },
            },
          ])
          .toArray(),
      );
      expect(sorted(tally)).toEqual(sorted(without(stored, theirs)));
      expect(sure.length / docs.length).toBeGreaterThan(0.7);
    }
  });
});

function without(tally: GroupTally, less: GroupTally): Map<string, number> {
  const left = new Map(tally);
  for (const [row, count] of less) {
    const rest = (left.get(row) ?? 0) - count;
    if (rest > 0) left.set(row, rest);
    else left.delete(row);
  }
  return left;
}

const sorted = (tally: ReadonlyMap<string, number>) => [...tally].sort(([a], [b]) => (a < b ? -1 : 1));
