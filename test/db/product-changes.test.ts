import { Decimal128, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { cacheScopeOf } from '../../src/db/derived/cache-scope';
import { movesLists } from '../../src/db/derived/product-changes';
import { ANY_PRODUCT_TAG, listTag, groupsTag } from '../../src/db/catalog/read-tags';

/** Which product changes may move a product into or out of a list, and what they purge otherwise. */

const product: Document = {
  _id: 7,
  id: 7,
  name: 'Nebula Gift Card',
  short_description: 'A card',
  brand_id: 'brd_nebula',
  brand_name: 'Nebula',
  category_name: 'Gift Cards',
  category_key: 'gift cards',
  tags: ['gift'],
  variant: { id: 1007, price: { amount: 2500, currency: 'USD' } },
};
const change = (before: Document | undefined, after: Document | null) => ({
  _id: 7,
  before,
  document: after,
});
const batch = (...changes: ReturnType<typeof change>[]) => ({ changes });
const priced = (amount: unknown) => ({
  ...product,
  variant: { ...product.variant, price: { amount, currency: 'USD' } },
});

describe('a product change', () => {
  it('of its price, stock or description moves no list, and purges what holds the product and its variant', () => {
    const cheaper = batch(change(product, { ...priced(2400), is_permanent_out_of_stock: true }));
    expect(movesLists(cheaper)).toBe(false);
    const scope = cacheScopeOf(cheaper);
    expect(scope !== 'all' && scope.tags).toEqual([ANY_PRODUCT_TAG, 'product:7', 'variant:1007']);
    expect(scope !== 'all' && scope.touches(listTag({ words: ['gift'] }))).toBe(false);
    expect(scope !== 'all' && scope.touches(groupsTag('categories'))).toBe(false);
    expect(movesLists(batch(change(product, priced(Decimal128.fromString('24.00')))))).toBe(false);
  });

  it.each([
    ['a rename', { name: 'Renamed Card' }],
    ['a category move', { category_key: 'software', category_name: 'Software' }],
    ['a new tag', { tags: ['gift', 'sale'] }],
    ['a brand change', { brand_id: 'brd_other' }],
  ])('%s moves lists (without the log, every cached answer and kept total goes)', (_label, fields) => {
    const moved = batch(change(product, { ...product, ...fields }));
    expect(movesLists(moved)).toBe(true);
  });

  it('from the log purges the filters it entered or left, not the others', () => {
    const renamed = cacheScopeOf(
      batch(change({ ...product, name: 'Nebula Deluxe' }, { ...product, name: 'Nebula Voucher' })),
    );
    if (renamed === 'all') throw new Error('a change with its before-image is scoped');
    expect(renamed.touches(listTag({ words: ['deluxe'] }))).toBe(true);
    expect(renamed.touches(listTag({ words: ['VOUCHER', 'gift'] }))).toBe(true);
    expect(renamed.touches(listTag({ words: ['card'] }))).toBe(false);
    expect(renamed.touches(listTag({ words: ['nebula'] }))).toBe(false);
    expect(renamed.touches(listTag({ words: [], category: 'Software' }))).toBe(false);
    expect(renamed.touches(listTag({ words: [] }))).toBe(false);
    expect(renamed.touches(groupsTag('categories'))).toBe(false);
    const moved = cacheScopeOf(
      batch(change(product, { ...product, category_key: 'software', category_name: 'Software' })),
    );
    if (moved === 'all') throw new Error('a change with its before-image is scoped');
    expect(moved.touches(listTag({ words: [], category: 'Software' }))).toBe(true);
    expect(moved.touches(listTag({ words: [], category: 'gift cards' }))).toBe(true);
    expect(moved.touches(listTag({ words: [], category: 'Games' }))).toBe(false);
    expect(moved.touches(groupsTag('categories'))).toBe(true);
    expect(moved.touches(groupsTag('brands'))).toBe(false);
    const inserted = cacheScopeOf({
      changes: [{ _id: 8, document: { ...product, _id: 8, id: 8 }, inserted: true as const }],
    });
    expect(inserted !== 'all' && inserted.touches(listTag({ words: [] }))).toBe(true);
    expect(cacheScopeOf(batch(change(undefined, product)))).toBe('all');
  });

  it('that makes its price unreadable (counts leave it out) moves lists', () => {
    expect(movesLists(batch(change(product, priced({ cents: 2500 }))))).toBe(true);
  });

  it('an insert, a deletion, a change without its before-image (polling) or unseen changes move lists', () => {
    expect(movesLists(batch(change(undefined, product)))).toBe(true);
    expect(movesLists(batch(change(product, null)))).toBe(true);
    expect(movesLists({ changes: [], unseenChanges: true })).toBe(true);
  });
});
