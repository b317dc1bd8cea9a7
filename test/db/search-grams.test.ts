import escapeStringRegexp from 'escape-string-regexp';
import { describe, expect, it } from 'vitest';
import { documentGrams, foldCase, GRAM_LENGTH, wordGrams } from '../../src/db/catalog/search-grams';

function matchesCaseInsensitively(word: string, text: string): boolean {
  return new RegExp(escapeStringRegexp(word), 'iu').test(text);
}

function single(text: string): boolean {
  return [...text].length === 1;
}

describe('search grams', () => {
  it('folds every case-equivalent pair of code points to one representative', () => {
    const mismatches: string[] = [];
    for (let codePoint = 0; codePoint <= 0x1ffff; codePoint++) {
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) continue;
      const char = String.fromCodePoint(codePoint);
      const relatives = [
        char.toLowerCase(),
        char.toUpperCase(),
        char.toLowerCase().toUpperCase(),
        char.toUpperCase().toLowerCase(),
      ].filter((relative) => relative !== char && single(relative));
      for (const relative of relatives) {
        if (matchesCaseInsensitively(char, relative) && foldCase(char) !== foldCase(relative)) {
          mismatches.push(`U+${codePoint.toString(16)} ${char} ~ ${relative}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('keeps the number of code points and never normalises', () => {
    for (const text of ['Straße', 'İstanbul', 'ﬁne', 'e\u0301', 'é', '🎁 Gift', 'ΣΊΣΥΦΟΣ', 'Kelvin']) {
      expect([...foldCase(text)].length).toBe([...text].length);
    }
    expect(foldCase('e\u0301')).not.toBe(foldCase('é'));
    expect(foldCase('ſ K ς ẞ')).toBe('s k σ ß');
  });

  it('finds every word the case-insensitive regex finds among a document grams', () => {
    const doc = {
      name: 'Straße GIFT-Card ΣΊΣΥΦΟΣ',
      short_description: 'ﬁne İstanbul e\u0301 🎁🎉 gifts',
      brand_name: 'KELVIN Corp',
      category_name: 'Gift Cards',
      tags: ['x1', 'a.b*c'],
    };
    const grams = new Set(documentGrams(doc));
    const words = [
      'strasse',
      'straße',
      'STRASSE',
      'gift',
      'Gift-c',
      'σίσυφος',
      'ﬁne',
      'istanbul',
      'İstan',
      'e\u0301',
      '🎁🎉',
      'kelvin',
      'Corp',
      'cards',
      'a.b*c',
      '.b*',
      'x1',
      'ift',
      'gifts',
    ];
    const fields = [doc.name, doc.short_description, doc.brand_name, doc.category_name, ...doc.tags];
    for (const word of words) {
      const found = fields.some((field) => matchesCaseInsensitively(word, field));
      const candidate = wordGrams(word).every((gram) => grams.has(gram));
      if (found) expect(candidate, word).toBe(true);
    }
  });

  it('gives no grams for a word shorter than a gram, and no gram spans whitespace', () => {
    expect(wordGrams('ab'.slice(0, GRAM_LENGTH - 1))).toEqual([]);
    expect(
      documentGrams({ name: 'ab cd', short_description: '', brand_name: '', category_name: '', tags: [] }),
    ).toEqual(GRAM_LENGTH > 2 ? [] : ['ab', 'cd']);
  });
});
