import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { parse, print, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { SCAN_COST, SHORT_WORD_COST, WORD_COST, estimateCost } from '../src/graphql-cost';
import { schema } from '../src/schema/index';

/** armor's own estimate of a document, read from its onAccept callback. */
function armorCost(query: string): number {
  let cost = -1;
  validate(schema, parse(query), [
    costLimitRule({ maxCost: Number.MAX_SAFE_INTEGER, onAccept: [(_context, { n }) => (cost = n)] }),
  ]);
  return cost;
}

describe('estimateCost', () => {
  it.each([
    '{ products(first: 100) { edges { node { name variant { price { formatted } } } } } }',
    'query { a: productPage(page: 1, category: "") { total items { name } } b: node(id: "x") { id ... on Product { name } } }',
    '{ products(last: 5) { edges { node { ...F } } } } fragment F on Product { name tags variant { name } }',
  ])('agrees with graphql-armor where armor sees the multiplier: %s', (query) => {
    expect(estimateCost(parse(query))).toBeCloseTo(armorCost(query), 6);
  });

  it('multiplies by list arguments and by size arguments given as variables', () => {
    const one = estimateCost(parse('{ nodes(ids: ["a"]) { id } }'));
    expect(estimateCost(parse('{ nodes(ids: ["a", "b", "c"]) { id } }'))).toBe(3 * one);
    const byVariable = parse('query ($ids: [ID!]!) { nodes(ids: $ids) { id } }');
    expect(estimateCost(byVariable, undefined, { ids: Array(100).fill('a') })).toBe(100 * one);
    const page = parse('query ($n: Int) { productPage(perPage: $n) { items { name } } }');
    expect(estimateCost(page, undefined, { n: 50 })).toBe(50 * estimateCost(page, undefined, { n: 1 }));
  });

  it('costs the named operation and ignores introspection', () => {
    const document = parse('query A { __typename } query B { products(first: 10) { totalCount } }');
    expect(estimateCost(document, 'A')).toBe(1);
    expect(estimateCost(document, 'B')).toBeGreaterThan(1);
    expect(estimateCost(parse('{ __schema { types { name } } }'))).toBe(0);
  });

  it('prices an absent variable at its default, as it runs (an explicit null stays null)', () => {
    const page = '{ edges { node { name variant { price { formatted } } } } }';
    const literal = estimateCost(parse(`{ products(first: 100) ${page} }`));
    const byDefault = parse(`query ($n: Int = 100) { products(first: $n) ${page} }`);
    expect(estimateCost(byDefault)).toBe(literal);
    expect(estimateCost(byDefault, undefined, {})).toBe(literal);
    expect(estimateCost(byDefault, undefined, { n: 2 })).toBe(
      estimateCost(parse(`{ products(first: 2) ${page} }`)),
    );
    expect(estimateCost(byDefault, undefined, { n: null })).toBe(estimateCost(parse(`{ products ${page} }`)));

    const ids = JSON.stringify(Array(100).fill('a'));
    const nodes = parse(`query ($ids: [ID!] = ${ids}) { nodes(ids: $ids) { id } }`);
    expect(estimateCost(nodes)).toBe(estimateCost(parse(`{ nodes(ids: ${ids}) { id } }`)));
  });

  it('adds a scan for a text search, a filtered count and a grouping, whatever the page size', () => {
    const plain = estimateCost(parse('{ products(first: 1) { totalCount } }'));
    expect(estimateCost(parse('{ products(first: 1, search: "  ") { totalCount } }'))).toBe(plain);
    expect(
      estimateCost(parse('{ products(first: 1, search: "card") { edges { cursor } } }')),
    ).toBeGreaterThan(SCAN_COST);
    expect(estimateCost(parse('{ products(first: 1, search: "card") { totalCount } }'))).toBe(
      plain + 2 * SCAN_COST,
    );
    const byVariable = parse(
      'query ($s: String = "card") { products(first: 1, search: $s) { ...Total } } fragment Total on ProductConnection { totalCount }',
    );
    expect(estimateCost(byVariable)).toBeGreaterThan(2 * SCAN_COST);
    expect(estimateCost(byVariable, undefined, { s: '' })).toBeLessThan(SCAN_COST);
    expect(estimateCost(parse('{ products(first: 1, category: "games") { totalCount } }'))).toBe(
      plain + SCAN_COST,
    );
    expect(estimateCost(parse('{ categories { name productCount } }'))).toBeGreaterThan(SCAN_COST);
    expect(estimateCost(parse('{ searchProductPage(term: "card") { total } }'))).toBeGreaterThan(
      2 * SCAN_COST,
    );
    // The twenty aliases cost 70 before.
    const twenty = `{ ${Array.from({ length: 20 }, (_, index) => `s${index}: products(first: 1, search: "card ${index}") { totalCount }`).join(' ')} }`;
    expect(estimateCost(parse(twenty))).toBeGreaterThan(150_000);
  });

  it('prices each further search word, each word of 1–2 characters (a scan) and the products a page skips', () => {
    const cost = (query: string, variables?: Record<string, unknown>) =>
      estimateCost(parse(query), undefined, variables);
    const search = (term: string) =>
      cost('query ($t: String) { products(first: 1, search: $t) { totalCount } }', { t: term });
    expect(search('gift card code') - search('gift')).toBe(2 * WORD_COST);
    expect(search('gift a') - search('gift')).toBe(WORD_COST + SHORT_WORD_COST);
    expect(search(Array.from({ length: 30 }, (_, index) => `word${index}`).join(' '))).toBeGreaterThan(
      search('gift') + 29 * WORD_COST - 1,
    );
    const page = (number: number) => cost(`{ productPage(page: ${number}, perPage: 40) { total } }`);
    // Page 201 of 40 skips 8,000 products.
    expect(page(201) - page(1)).toBe(800);
  });
});

describe('estimateCost, kept per operation and shape of its variables', () => {
  const document = parse(
    'query ($term: String, $n: Int = 5, $ids: [ID!]) { searchProductPage(term: $term, perPage: $n) { total items { name } } nodes(ids: $ids) { id } }',
  );
  const fresh = (variables: Record<string, unknown>) =>
    estimateCost(parse(print(document)), undefined, variables);

  it.each([
    { term: 'gift card' },
    { term: 'gift card', n: 5 },
    { term: 'gi', n: 50 },
    { term: 'soundwave', n: 50, ids: ['a', 'b'] },
    { term: '   ', ids: [] },
    { term: null, n: null },
    { term: 'x y z', n: 1, ids: ['a', 'b', 'c', 'd'] },
  ])('answers what a fresh walk of the document does: %j', (variables) => {
    // The same document object each time, so every call after the first may come from what is kept.
    expect(estimateCost(document, undefined, variables)).toBe(fresh(variables));
    expect(estimateCost(document, undefined, { ...variables })).toBe(fresh(variables));
  });

  it('tells a word from two words and a long word from a short one', () => {
    const one = estimateCost(document, undefined, { term: 'soundwave' });
    expect(estimateCost(document, undefined, { term: 'soundwave headphones' })).toBe(one + WORD_COST);
    expect(estimateCost(document, undefined, { term: 'so' })).toBe(one + SHORT_WORD_COST);
  });
});
