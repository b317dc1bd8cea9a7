import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import type { ProductDoc } from '../../src/db/documents';
import { productFilter } from '../../src/db/catalog/product-plans';
import { createProductRepository } from '../../src/db/catalog/product-repository';
import {
  createSearchPlanner,
  hasUnindexed,
  searchGrams,
  WALK_BUDGET,
  walkMayFill,
} from '../../src/db/catalog/product-search';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { generateProduct } from '../../seed/generator';
import { loadGenerated } from '../../seed/load';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The n-gram path agrees with today's scan: every term of the corpus is searched through REST
 * (`?search=`, `/search?term=`) and GraphQL (`searchProducts`, first and last windows) on 20,000
 * generated products plus products written to catch case folding, and the ids and totals must be
 * exactly those of the old filter (the regexes alone, no grams) run through the driver.
 */

const GENERATED = 20_000;
const PER_PAGE = 100;

/** Text the generator never writes: case folding, combining marks, emoji, regex characters. */
const TRICKY_TEXT: [string, string, string[]][] = [
  ['Straße Gift Card', 'Eine Karte für die Straße.', ['straße']],
  ['STRASSE Voucher', 'Upper-case double s, not ß.', ['strasse']],
  ['ẞ Capital Sharp S Edition', 'The capital ẞ.', ['ẞ']],
  ['İstanbul Metro Pass', 'Dotted capital İ.', ['i̇stanbul']],
  ['ıstanbul Ferry Pass', 'Dotless ı.', ['ferry']],
  ['ﬁne Print Ebook', 'A ligature ﬁ in the name.', ['ﬁ']],
  ['Fine Arts Pass', 'Plain fi.', ['fine']],
  ['Cafe\u0301 Voucher', 'A combining acute accent.', ['cafe\u0301']],
  ['Café Voucher', 'A precomposed é.', ['café']],
  ['🎁🎉 Party Pack', 'Emoji only 🎁.', ['🎁', '🎉']],
  ['\u212Aelvin Thermo Credit', 'Kelvin sign K.', ['kelvin']],
  ['Chauſſure Credit', 'Long s ſ.', ['ſ']],
  ['ΣΊΣΥΦΟΣ Game Key', 'Final sigma ς and σ: σίσυφος.', ['σίσυφος']],
  ['a.b*c (12) $where Pack', 'Regex characters: [a-z] \\d ^x y$ a|b +?', ['c++', '(12', '.*']],
  ['Pixel 1,000 Gems', 'Digits 500 and 5,500.', ['1,000', '10']],
  ['Ab', 'x', ['y']],
];

function trickyProducts(firstId: number): ProductDoc[] {
  return TRICKY_TEXT.map(([name, short_description, tags], index) => {
    const base = generateProduct(7, index + 1);
    const id = firstId + index;
    return {
      ...base,
      id,
      variant: { ...base.variant, id: 90_000_000 + id },
      name,
      short_description,
      tags,
    };
  });
}

/** [term, why]: each a search text as a user types it. */
const CORPUS: string[] = [
  // regex characters, matched literally
  '.*',
  'a.b*c',
  '.b*',
  '(12',
  '(12)',
  '$where',
  '[a-z]',
  '\\d',
  'c++',
  '^x',
  'y$',
  'a|b',
  '+?',
  'months)',
  // Unicode case folding and normalisation
  'ß',
  'straße',
  'STRASSE',
  'strasse',
  'ẞ',
  'İstanbul',
  'istanbul',
  'ıstanbul',
  'ISTANBUL',
  'ﬁ',
  'ﬁne',
  'fine',
  'FINE',
  'cafe\u0301',
  'CAFE\u0301',
  'café',
  'cafe',
  'e\u0301',
  'kelvin',
  'KELVIN',
  '\u212Aelvin',
  'chaussure',
  'chauſſure',
  'CHAUSSURE',
  'σίσυφος',
  'ΣΊΣΥΦΟΣ',
  'σίσυφοσ',
  // emoji
  '🎁',
  '🎁🎉',
  '🎉 party',
  '🎮',
  // digits
  '1',
  '10',
  '500',
  '1,000',
  '5,500',
  '2024',
  // one and two letters
  'a',
  'x',
  'ab',
  'go',
  'tv',
  'ab gift',
  // common, rare, absent
  'gift',
  'software',
  'for',
  'card',
  'food',
  'wordsmith',
  'zzqx',
  'giftcard',
  // words spanning two fields, several words
  'shieldnet gbp',
  'northwind bestseller',
  'software eur',
  'gift 🎮',
  'straße voucher',
  'gift card digital worth for',
  'gift card digital worth for zzqx',
  // Words shorter than a gram (each a scan's price in the cost budget: four keep a window of 100 within it).
  'a b c d',
  'GIFT Card',
];

let server: TestServer;
let expected: Map<string, number[]>;

async function restPage(path: string, param: string, term: string, page = 1) {
  const query = new URLSearchParams({ [param]: term, per_page: String(PER_PAGE), page: String(page) });
  const response = await server.request(`${path}?${query}`);
  const body = (await response.json()) as { data: { id: number }[]; meta: { total: number } };
  expect(response.status, term).toBe(200);
  return { ids: body.data.map((product) => product.id), total: body.meta.total };
}

async function graphqlWindow(term: string, window: 'first' | 'last') {
  const reply = await server.graphql(
    `query ($term: String!) { searchProducts(term: $term, ${window}: ${PER_PAGE}) { totalCount edges { node { databaseId } } } }`,
    { term },
  );
  expect(reply.body.errors, term).toBeUndefined();
  const connection = reply.body.data!.searchProducts as {
    totalCount: number;
    edges: { node: { databaseId: number } }[];
  };
  return { ids: connection.edges.map((edge) => edge.node.databaseId), total: connection.totalCount };
}

beforeAll(async () => {
  // Agreement, not admission: 1–2-letter words come quickly here, past the share their lane may
  // keep the database busy (test/ops/word-scan-lane.test.ts), which would answer 503.
  server = await startTestServer({ fixtures: false, env: { MONGODB_WORD_SCAN_BUSY_PERCENT: '100' } });
  const db = server.testDb.db;
  await loadGenerated(db, { seed: 11, products: GENERATED, orders: 0, batchSize: 5000 });
  await createProductRepository(db).insertMany(trickyProducts(GENERATED + 1));
  // Today's scan: the regexes alone, in id order.
  const products = db.collection<ProductDoc>('products');
  expected = new Map();
  for (const term of CORPUS) {
    const rows = await products
      .find(productFilter(criteriaFor(term, undefined)), { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .toArray();
    expected.set(
      term,
      rows.map((row) => row._id as number),
    );
  }
}, 300_000);
afterAll(() => server.stop());

describe('search through the grams agrees with the scan', () => {
  it('has a corpus that exercises every path', async () => {
    expect(await hasUnindexed(server.testDb.db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION))).toBe(
      false,
    );
    const sizes = CORPUS.map((term) => expected.get(term)!.length);
    // Found and not found, dense (walked) and sparse (through the index), short words (scan).
    expect(sizes.filter((size) => size === 0).length).toBeGreaterThan(3);
    expect(sizes.filter((size) => size > 0 && size < 20).length).toBeGreaterThan(10);
    expect(sizes.filter((size) => size > WALK_BUDGET).length).toBeGreaterThan(3);
    const planSearch = createSearchPlanner(
      server.testDb.db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION),
    );
    const plans = await Promise.all(CORPUS.map((term) => planSearch(criteriaFor(term, undefined).words)));
    expect(plans.filter((plan) => plan.kind === 'grams').length).toBeGreaterThan(CORPUS.length / 2);
    expect(plans.filter((plan) => plan.kind === 'scan').length).toBeGreaterThan(5);
    // Many read only some of their grams, and some skip the walk (src/db/catalog/gram-choice.ts).
    const subsets = CORPUS.filter((term, index) => {
      const plan = plans[index]!;
      return (
        plan.kind === 'grams' && plan.grams.length < searchGrams(criteriaFor(term, undefined).words).length
      );
    });
    expect(subsets.length).toBeGreaterThan(10);
    expect(
      plans.filter((plan) => plan.kind === 'grams' && !walkMayFill(plan, PER_PAGE)).length,
    ).toBeGreaterThan(10);
    // The tricky products are found by what the regex folds.
    for (const term of ['strasse', 'ẞ', 'kelvin', 'chaussure', 'σίσυφος', 'ﬁ', '🎁🎉', 'a.b*c'])
      expect(
        expected.get(term)!.some((id) => id > GENERATED),
        term,
      ).toBe(true);
  });

  it.each(CORPUS)('%s: REST ?search= and /search?term=', async (term) => {
    const all = expected.get(term)!;
    for (const [path, param] of [
      ['/api/v1/products', 'search'],
      ['/api/v1/products/search', 'term'],
    ] as const) {
      expect(await restPage(path, param, term), `${path} ${term}`).toEqual({
        ids: all.slice(0, PER_PAGE),
        total: all.length,
      });
    }
    // A page past the walk's budget: read through the index even for a common word.
    const deep = Math.ceil((WALK_BUDGET + 1) / PER_PAGE) + 1;
    if (all.length > (deep - 1) * PER_PAGE) {
      expect(await restPage('/api/v1/products', 'search', term, deep)).toEqual({
        ids: all.slice((deep - 1) * PER_PAGE, deep * PER_PAGE),
        total: all.length,
      });
    }
  });

  it.each(CORPUS)('%s: GraphQL searchProducts, first and last', async (term) => {
    const all = expected.get(term)!;
    expect(await graphqlWindow(term, 'first')).toEqual({ ids: all.slice(0, PER_PAGE), total: all.length });
    expect(await graphqlWindow(term, 'last')).toEqual({ ids: all.slice(-PER_PAGE), total: all.length });
  });
});
