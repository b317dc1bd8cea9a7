import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { parse, validate } from 'graphql';
import { describe, expect, it } from 'vitest';
import { estimateCost } from '../src/graphql-cost';
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
    'query { a: productPage(page: 1) { total items { name } } b: node(id: "x") { id ... on Product { name } } }',
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
});
