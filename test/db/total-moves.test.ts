import type { Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { totalKey } from '../../src/db/catalog/kept-count';
import { groupsOf, tallyOf } from '../../src/db/catalog/product-groups';
import { createTotalCache, DROP } from '../../src/db/catalog/total-cache';
import { totalMoveOf } from '../../src/db/derived/total-moves';

/** How a batch from the log moves kept totals, and when a total is dropped instead. */

const product: Document = {
  _id: 7,
  id: 7,
  name: 'Nebula Gift Card',
  brand_id: 'brd_nebula',
  brand_name: 'Nebula',
  category_name: 'Gift Cards',
  category_key: 'gift cards',
  variant: { id: 1007, price: { amount: 2500 } },
};
const gifts = totalKey({ words: [], category: 'Gift Cards' });
const software = totalKey({ words: [], category: 'software' });
const nebula = totalKey({ words: ['nebula'] });
const moved = { ...product, category_name: 'Software', category_key: 'software' };
const move = (before: Document | undefined, after: Document | null, inserted?: true) =>
  totalMoveOf({ changes: [{ _id: 7, before, document: after, ...(inserted ? { inserted } : {}) }] })!;

describe('a change from the log', () => {
  it('moves each total by its document before (−1) and after (+1)', () => {
    const categoryMove = move(product, moved);
    expect([categoryMove(gifts, 10), categoryMove(software, 3), categoryMove(nebula, 4)]).toEqual([9, 4, 4]);
    expect(move(undefined, product, true)(gifts, 10)).toBe(11);
    expect(move(product, null)(gifts, 10)).toBe(9);
  });

  it('drops a total it cannot be sure of: no before-image, a word outside ASCII, a gap', () => {
    expect(move(undefined, product)(gifts, 10)).toBe(DROP);
    expect(move(product, moved)(totalKey({ words: ['café'] }), 2)).toBe(DROP);
    expect(move(product, { ...product, tags: [['promo']] })(totalKey({ words: ['promo'] }), 2)).toBe(DROP);
    expect(totalMoveOf({ changes: [], unseenChanges: true })).toBeUndefined();
  });

  it('moves a product between the rows of the counts by category; a row it was never in drops them', () => {
    const tally = tallyOf([
      { _id: { key: 'gift cards', name: 'Gift Cards' }, productCount: 2 },
      { _id: { key: 'software', name: 'Software' }, productCount: 1 },
    ]);
    const after = move(product, moved)('categories', tally) as ReturnType<typeof tallyOf>;
    expect(groupsOf(after)).toEqual([
      { key: 'gift cards', name: 'Gift Cards', productCount: 1 },
      { key: 'software', name: 'Software', productCount: 2 },
    ]);
    expect(move(product, moved)('brands', tallyOf([]))).toBe(DROP);
  });
});

describe('the kept totals', () => {
  it('move only once settled; one still counting or settling is dropped, and counted again for "counting"', async () => {
    const totals = createTotalCache();
    let settle!: (settled: boolean) => void;
    await totals.get(
      gifts,
      async () => 10,
      () => new Promise((resolve) => (settle = resolve)),
    );
    totals.move(() => 11);
    settle(true);
    expect(await totals.get(gifts, async () => 20)).toBe(20);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(totals.counts()).toEqual({ first: 1, write: 0, counting: 1, evicted: 0, not_current: 0 });

    await totals.get(
      nebula,
      async () => 5,
      async () => true,
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
    totals.move((key, value) => (key === nebula ? (value as number) + 1 : DROP));
    expect(await totals.get(nebula, async () => 0)).toBe(6);
    expect(totals.counts().first).toBe(2);
  });
});
