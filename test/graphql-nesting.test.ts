import { describe, expect, it } from 'vitest';
import { documentNestsDeeperThan, nestsDeeperThan } from '../src/graphql-nesting';

/** The nesting measures: exact at the bound, and safe at any depth (nothing recurses). */

const lists = (depth: number, leaf = '"x"') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

describe('documentNestsDeeperThan', () => {
  it('counts selection sets, arguments, lists and objects, exactly at the bound', () => {
    // `{`, `(`, then the lists: 2 + depth brackets open at the deepest point.
    expect(documentNestsDeeperThan(`{ a(b: ${lists(8)}) }`, 10, 2_000)).toBe(false);
    expect(documentNestsDeeperThan(`{ a(b: ${lists(9)}) }`, 10, 2_000)).toBe(true);
    expect(documentNestsDeeperThan(`{ a(b: ${'{ c: '.repeat(9)}1${' }'.repeat(9)}) }`, 10, 2_000)).toBe(true);
  });

  it('ignores brackets in strings, block strings and comments', () => {
    const text = `{ a(b: "${'['.repeat(50)}", c: """${'{'.repeat(50)}""") # ${'('.repeat(50)}\n}`;
    expect(documentNestsDeeperThan(text, 10, 2_000)).toBe(false);
  });

  it('answers for 100,000 levels, stopping at the bound (the parser overflowed at ~1,500)', () => {
    expect(documentNestsDeeperThan(`{ a(b: ${lists(100_000)}) }`, 100, 1_000_000)).toBe(true);
  });

  it('leaves a lexical error to the parser', () => {
    expect(documentNestsDeeperThan(`{ a(b: ${'['.repeat(20)} "unterminated`, 10, 2_000)).toBe(true);
    expect(documentNestsDeeperThan(`{ a(b: "unterminated ${'['.repeat(20)}`, 10, 2_000)).toBe(false);
  });
});

describe('nestsDeeperThan', () => {
  it('counts arrays and objects, the top one as 1', () => {
    expect(nestsDeeperThan({ a: [[1]] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [[[1]]] }, 3)).toBe(true);
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan(null, 0)).toBe(false);
  });

  it('answers for 100,000 levels, stopping at the bound (JSON.stringify overflowed at ~5,000)', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(nestsDeeperThan(deep, 32)).toBe(true);
  });
});
