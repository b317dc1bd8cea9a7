import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { compareIds, gramWindow, mergeById, offsetPage, tailPage } from '../../src/db/catalog/search-pending';

/**
 * The merge of a search's pending matches with its gram matches, against the obvious answer (the
 * sorted union, sliced) for every page of many random splits.
 */

function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
}

const rows = (ids: number[]) => ids.map((_id) => ({ _id }));

describe('offset pages of gram matches merged with pending ones', () => {
  it('equal the sorted union, page by page, for random splits', () => {
    const next = random(42);
    for (let round = 0; round < 300; round++) {
      const all = Array.from({ length: Math.floor(next() * 40) }, (_, i) => i * 3 + 1);
      const pending = all.filter(() => next() < 0.25);
      const grams = all.filter((id) => !pending.includes(id));
      const limit = 1 + Math.floor(next() * 6);
      for (let skip = 0; skip <= all.length + limit; skip += limit) {
        const expected = all.slice(skip, skip + limit);
        const window = gramWindow(skip, limit, pending.length);
        const read = grams.slice(window.skip, window.skip + window.limit);
        const page =
          offsetPage(rows(read), window.skip, rows(pending), skip, limit) ??
          tailPage(
            rows(grams.slice(-pending.length || grams.length)),
            grams.length,
            rows(pending),
            skip,
            limit,
          );
        expect(
          page.map((row) => row._id),
          JSON.stringify({ grams, pending, skip, limit }),
        ).toEqual(expected);
      }
    }
  });

  it('keep a row read both ways once', () => {
    expect(mergeById(rows([1, 4, 6]), rows([2, 4, 7])).map((row) => row._id)).toEqual([1, 2, 4, 6, 7]);
  });
});

describe('compareIds', () => {
  it('orders numbers, then strings, then ObjectIds, as BSON does', () => {
    const a = new ObjectId('000000000000000000000001');
    const b = new ObjectId('000000000000000000000002');
    const ids = [b, 'b', 10, a, 'a', 2];
    expect([...ids].sort(compareIds)).toEqual([2, 10, 'a', 'b', a, b]);
  });
});
