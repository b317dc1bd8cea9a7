import { describe, expect, it } from 'vitest';
import { keysWithin, mergeWindow, pageSlots } from '../../src/db/foreign-keys';

/** The merge of own-keyed rows and other writers' rows, against a plain sort of both, without a database. */

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Disjoint ascending own and foreign ids among 1..size. */
function split(next: () => number, size: number, foreignShare: number): { own: number[]; foreign: number[] } {
  const own: number[] = [];
  const foreign: number[] = [];
  for (let id = 1; id <= size; id++) (next() < foreignShare ? foreign : own).push(id);
  return { own, foreign };
}

const identity = (id: number) => id;

describe('pageSlots', () => {
  it('gives every page of the merged order, for any mix and page size', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const { own, foreign } = split(next, 1 + Math.floor(next() * 60), next());
      const merged = [...own, ...foreign].sort((a, b) => a - b);
      const limit = 1 + Math.floor(next() * 7);
      for (let skip = 0; skip <= merged.length + limit; skip += limit) {
        // As storedPage reads: own rows from rank skip - (foreign count), enough of them.
        const ownSkip = Math.max(0, skip - foreign.length);
        const fetched = own.slice(ownSkip, ownSkip + limit + (skip - ownSkip));
        const slots = pageSlots(fetched, ownSkip, foreign, identity, skip, limit);
        const ids = slots.map((slot) => ('own' in slot ? slot.own : slot.foreign));
        expect(ids, `seed ${seed}, skip ${skip}, limit ${limit}`).toEqual(merged.slice(skip, skip + limit));
      }
    }
  });

  it('lists a value held both ways once, as the own row', () => {
    expect(pageSlots([1, 2, 3], 0, [2, 4], identity, 0, 10)).toEqual([
      { own: 1 },
      { own: 2 },
      { own: 3 },
      { foreign: 4 },
    ]);
  });
});

describe('mergeWindow and keysWithin', () => {
  it('give every keyset window of the merged order, both ways', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const { own, foreign } = split(next, 1 + Math.floor(next() * 60), next());
      const keys = foreign.map((value) => ({ key: `k${value}`, value }));
      const merged = [...own, ...foreign].sort((a, b) => a - b);
      const limit = 1 + Math.floor(next() * 7);
      for (const direction of [1, -1] as const) {
        const order = direction === 1 ? merged : [...merged].reverse();
        let bound: number | undefined;
        const seen: number[] = [];
        for (let round = 0; round <= merged.length; round++) {
          const past = (id: number) => bound === undefined || (direction === 1 ? id > bound : id < bound);
          const ownRows = (direction === 1 ? own : [...own].reverse()).filter(past).slice(0, limit);
          const range = direction === 1 ? { after: bound } : { before: bound };
          const inRange = new Set(keysWithin(keys, range));
          const theirs = (direction === 1 ? foreign : [...foreign].reverse())
            .filter((id) => inRange.has(`k${id}`))
            .slice(0, limit);
          const window = mergeWindow(ownRows, theirs, identity, direction, limit);
          seen.push(...window);
          if (window.length < limit) break;
          bound = window.at(-1);
        }
        expect(seen, `seed ${seed}, direction ${direction}`).toEqual(order);
      }
    }
  });
});
