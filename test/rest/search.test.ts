import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { call, fixtureMatches, ids, range, withQuery } from './helpers';

/**
 * Search and category semantics. Every expected id list was worked out by reading
 * seed/fixtures.ts (the comment says which field matches) and is cross-checked against an
 * independent reading of the rule over the fixtures (helpers.fixtureMatches), never against
 * the server's own output.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

/** All matches on one page (per_page=100), so ids are the whole result. */
async function listIds(query: Record<string, string>): Promise<number[]> {
  const reply = await call(server, withQuery('/api/v1/products', { per_page: '100', ...query }));
  expect(reply.status, JSON.stringify(query)).toBe(200);
  expect(reply.body.meta.total).toBe(reply.body.data.length);
  return ids(reply);
}

async function searchIds(term: string): Promise<number[]> {
  const reply = await call(server, withQuery('/api/v1/products/search', { term, per_page: '100' }));
  expect(reply.status, term).toBe(200);
  expect(reply.body.meta.total).toBe(reply.body.data.length);
  return ids(reply);
}

/** [text, expected ids, why] — each case runs on both `search` and `term`. */
const CASES: [string, number[], string][] = [
  // literal matching of user text
  ['C++', [11], "name 'DevForge C++ Studio License' and tag 'c++'; '+' is not a quantifier"],
  ['.*', [], 'no field contains the two characters ".*"'],
  ['(', [16, 17], "names 'Soundwave Premium (12 months)' and '(1 month)'"],
  ['$where', [], 'not an operator; no field contains "$where"'],
  ['{"$gt":""}', [], 'not an operator; no field contains it'],
  ['^Northwind', [], 'an anchor is a literal caret'],
  ['Northwind$', [], 'an anchor is a literal dollar'],
  ['[a-z]', [], 'a character class is literal brackets'],
  ['gift|software', [], 'alternation is a literal bar'],
  ['\\d', [], 'a backslash escape is a literal backslash'],
  ['(12', [16], "literal '(12' in 'Soundwave Premium (12 months)'"],
  ['1,000', [6], "name 'Pixelforge 1,000 Gems' (the comma is literal)"],
  // unicode
  ['🎮', [6, 7], "tag '🎮' on the two Pixelforge products"],
  ['café', [5], "name 'Maple Street Café …' and tag 'café'"],
  ['cafe', [], 'no accent folding: café is not cafe'],
  // words AND-ed
  ['soundwave 12', [16], "both words only in 'Soundwave Premium (12 months)'; 17 is '(1 month)'"],
  ['soundwave', [16, 17], 'name and brand of both Soundwave products'],
  ['soundwave    12', [16], 'several spaces between words are one separator'],
  ['soundwave\t12', [16], 'a tab separates words too'],
  ['12 soundwave', [16], 'word order does not matter'],
  ['soundwave soundwave', [16, 17], 'a repeated word changes nothing'],
  ['NORTHWIND gift', [1, 2], "Northwind Market gift cards; 'gift' also in their names and tags"],
  ['northwind bestseller', [2], "words from different fields: brand and tag 'bestseller'"],
  ['gift groceries', [1, 2], "tag 'groceries' on the two Northwind cards"],
  ['gems zzz', [], 'one word matching nothing empties the result'],
  // case-insensitive substring
  ['PIXELFORGE', [6, 7], 'upper case finds Pixelforge'],
  ['pixelforge', [6, 7], 'lower case finds Pixelforge'],
  ['forge', [6, 7, 11], 'a substring: Pixelforge and DevForge'],
  ['gift', [1, 2, 3, 4, 5], "the Gift Cards category; 3 also by 'eGift'"],
  // fields OR-ed: each searchable field on its own
  ['license', [11], "name only ('… Studio License'); the short description says 'licence'"],
  ['perpetual', [11], "short_description only ('Perpetual DevForge …'); notes and variant are not searched"],
  ['subscriptions', range(16, 20), "category_name 'Subscriptions' (short descriptions say 'subscription')"],
  ['mmo', [9], "tag 'mmo' only (the description's 'MMO' is not searched)"],
  ['privacy', [20], "tag 'privacy' only"],
  ['bestseller', [2], "tag 'bestseller' only"],
  ['brd_', [], 'brand_id is not searched'],
  // fields that are not searched
  ['ransomware', [], 'description only (ShieldNet) – not searched'],
  ['rental', [], "notes ('Atlas rental stations') and description only – not searched"],
  ['Global', [], 'region only – not searched'],
  ['cdn.example.com', [], 'images only – not searched'],
  ['store.example.com', [], 'url only – not searched'],
  ['1,000 Gems', [6], "name 'Pixelforge 1,000 Gems'; the variant name is not what matches"],
];

describe('the expectations themselves', () => {
  it('agree with an independent reading of the rule over the fixtures', () => {
    for (const [text, expected] of CASES) expect(fixtureMatches(text), text).toEqual(expected);
  });
});

describe('GET /api/v1/products?search=…', () => {
  for (const [text, expected, why] of CASES) {
    it(`${JSON.stringify(text)} → [${expected.join(', ')}] (${why})`, async () => {
      expect(await listIds({ search: text })).toEqual(expected);
    });
  }

  it('a blank search ("   ") means no filter: all 20', async () => {
    const reply = await call(server, withQuery('/api/v1/products', { search: '   ' }));
    expect(reply.body.meta.total).toBe(20);
    expect(await listIds({ search: '   ' })).toEqual(range(1, 20));
  });

  it('an empty search means no filter: all 20', async () => {
    expect(await listIds({ search: '' })).toEqual(range(1, 20));
  });

  it('surrounding spaces are ignored', async () => {
    expect(await listIds({ search: '  soundwave 12  ' })).toEqual([16]);
  });

  it('bracketed parameter names are not operators: search[$ne]=x is an array, refused like Laravel', async () => {
    // PHP reads `search[$ne]=x` as an array; Laravel's `string` rule refuses it (issue 10/14).
    const reply = await call(server, '/api/v1/products?search%5B%24ne%5D=x&per_page=100');
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({
      message: 'The search field must be a string.',
      errors: { search: ['The search field must be a string.'] },
    });
  });
});

describe('GET /api/v1/products/search?term=… (same matching as search)', () => {
  for (const [text, expected, why] of CASES) {
    it(`${JSON.stringify(text)} → [${expected.join(', ')}] (${why})`, async () => {
      expect(await searchIds(text)).toEqual(expected);
    });
  }

  it('ignores category: term=gift&category=software still finds the gift cards', async () => {
    const reply = await call(
      server,
      withQuery('/api/v1/products/search', { term: 'gift', category: 'software' }),
    );
    expect(ids(reply)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('category', () => {
  const CATEGORY_CASES: [string, number[]][] = [
    ['Software', range(11, 15)],
    ['software', range(11, 15)],
    ['SOFTWARE', range(11, 15)],
    ['sOfTwArE', range(11, 15)],
    ['  software  ', range(11, 15)],
    ['Gift Cards', range(1, 5)],
    ['gift cards', range(1, 5)],
    ['Game Credit', range(6, 10)],
    ['subscriptions', range(16, 20)],
    ['Soft', []],
    ['Software ', range(11, 15)],
    ['Gift', []],
    ['Cards', []],
    ['Gift  Cards', []],
    ['Soft.*', []],
    ['.*', []],
    ['{"$ne":""}', []],
    ['brd_devforge', []],
  ];
  for (const [category, expected] of CATEGORY_CASES) {
    it(`category=${JSON.stringify(category)} → [${expected.join(', ')}] (exact, case-insensitive)`, async () => {
      expect(fixtureMatches(undefined, category)).toEqual(expected);
      expect(await listIds({ category })).toEqual(expected);
    });
  }

  it('a blank category means no filter', async () => {
    expect(await listIds({ category: '' })).toEqual(range(1, 20));
    expect(await listIds({ category: '  ' })).toEqual(range(1, 20));
  });

  it('combines with search (AND): year + software → [12, 14, 15]', async () => {
    // 'year': 12 (name '… 1 Year'), 14 and 15 ('for one year'), 19 ('for one year', Subscriptions).
    expect(fixtureMatches('year')).toEqual([12, 14, 15, 19]);
    expect(fixtureMatches('year', 'software')).toEqual([12, 14, 15]);
    expect(await listIds({ search: 'year' })).toEqual([12, 14, 15, 19]);
    expect(await listIds({ search: 'year', category: 'software' })).toEqual([12, 14, 15]);
    expect(await listIds({ search: 'year', category: 'SUBSCRIPTIONS' })).toEqual([19]);
  });

  it('combines with search: a word from another category gives nothing', async () => {
    expect(await listIds({ search: 'pixelforge', category: 'software' })).toEqual([]);
    expect(await listIds({ search: 'pixelforge gems', category: 'game credit' })).toEqual([6, 7]);
  });

  it('combines with a blank search: category alone applies', async () => {
    expect(await listIds({ search: '  ', category: 'Software' })).toEqual(range(11, 15));
  });
});
