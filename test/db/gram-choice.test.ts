import { describe, expect, it } from 'vitest';
import { chooseGrams, sampleOf } from '../../src/db/catalog/gram-choice';
import { wordGrams } from '../../src/db/catalog/search-grams';

/** `count` sampled products carrying `grams`. */
function products(count: number, grams: string[]): string[][] {
  return Array.from({ length: count }, () => grams);
}

describe('choosing the grams a search reads', () => {
  it('reads only the rarest gram of a common word whose grams always travel together', () => {
    // "software" in 22 % of products; its grams "are" and "war" also come from other words.
    const sample = sampleOf([
      ...products(440, wordGrams('software')),
      ...products(600, ['are', 'war', 'xyz']),
      ...products(960, ['abc']),
    ]);
    expect(chooseGrams(wordGrams('software'), sample)).toEqual({ grams: ['ftw'], share: 440.5 / 2001 });
  });

  it('adds a second word’s gram only when it removes more candidates than its entries cost', () => {
    // Apart, "dne" and "gbp" are each in 5 % of products; together in 0.1 %.
    const rarelyTogether = sampleOf([
      ...products(2, ['dne', 'gbp', 'net']),
      ...products(98, ['dne', 'net']),
      ...products(98, ['gbp', 'net']),
      ...products(1_802, ['net']),
    ]);
    expect(chooseGrams(['dne', 'gbp', 'net'], rarelyTogether)).toEqual({
      grams: ['dne', 'gbp'],
      share: 2.5 / 2001,
    });
    const alwaysTogether = sampleOf([...products(100, ['dne', 'gbp', 'net']), ...products(1_900, ['net'])]);
    expect(chooseGrams(['dne', 'gbp', 'net'], alwaysTogether).grams).toEqual(['dne']);
  });

  it('prefers a gram the sample never saw: it is rare, and the regexes still decide', () => {
    const sample = sampleOf(products(100, ['foo', 'ood']));
    expect(chooseGrams(['foo', 'ood', 'odz'], sample)).toEqual({ grams: ['odz'], share: 0.5 / 101 });
  });

  it('is always a non-empty subset of the grams, in order, and all of them without a sample', () => {
    const grams = wordGrams('streamnest');
    expect(chooseGrams(grams, undefined)).toEqual({ grams: [...grams].sort() });
    expect(chooseGrams(grams, sampleOf([]))).toEqual({ grams: [...grams].sort() });
    for (const sample of [sampleOf(products(50, grams)), sampleOf(products(50, ['zzz']))]) {
      const chosen = chooseGrams(grams, sample).grams;
      expect(chosen.length).toBeGreaterThan(0);
      expect(chosen.every((gram) => grams.includes(gram))).toBe(true);
      expect(chosen).toEqual([...chosen].sort());
    }
    expect(chooseGrams([], sampleOf(products(5, ['abc'])))).toEqual({ grams: [] });
  });

  it('takes from stored grams only what a product written by another system may add', () => {
    const hostile = [
      null,
      'not a list',
      { $all: ['abc'] },
      [42, { gram: 'abc' }, 'x'.repeat(1_000), 'abc', 'abc'],
      Array.from({ length: 50_000 }, (_, index) => `g${index}`),
    ];
    const sample = sampleOf(hostile);
    expect(sample.size).toBe(5);
    expect([...sample.carriers.get('abc')!]).toEqual([3]);
    expect(sample.carriers.has('x'.repeat(1_000))).toBe(false);
    // At most 1,000 grams of one product.
    expect(sample.carriers.size).toBe(1 + 1_000);
    expect(sampleOf(products(20_000, ['abc'])).size).toBe(10_000);
  });
});
