import { createHash } from 'node:crypto';

/**
 * The n-grams that let an index find candidates for a literal, case-insensitive substring search.
 *
 * Correctness rests on one property: whenever the database's case-insensitive `$regex` finds a
 * word in a field, every gram of the folded word is a gram of the folded field. The grams only
 * select candidates; the same `$regex` as before still decides, so results never change.
 */

/** Length of a gram in code points (chosen by measurement: docs/benchmarks.md, "Search"). */
export const GRAM_LENGTH = 3;

/** Strings of a field as the regex sees them: a string, or the strings of an array. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/**
 * Written by any system, a field may be missing, another type or an array. A regex matches
 * strings (and an array's string elements): those are the text. Joining with a space keeps each
 * string's tokens apart, so no gram spans two of them.
 */
export function searchableTextOf(doc: Record<string, unknown>): SearchableText {
  const text = (field: string) => strings(doc[field]).join(' ');
  return {
    name: text('name'),
    short_description: text('short_description'),
    brand_name: text('brand_name'),
    category_name: text('category_name'),
    tags: strings(doc.tags),
  };
}

/** Bumped whenever the gram rules change, so stored grams can be recognised as stale. */
export const SEARCH_GRAMS_VERSION = 1;

/** A document's searchable text, field by field (tags one entry each). */
export interface SearchableText {
  name: string;
  short_description: string;
  brand_name: string;
  category_name: string;
  tags: readonly string[];
}

function single(text: string, fallback: string): string {
  // One code point in, one out; a mapping to several (ß → SS, İ → i̇) is not a simple case fold.
  return [...text].length === 1 ? text : fallback;
}

const foldedCodePoints = new Map<string, string>();

/**
 * One representative per case-equivalence class, code point by code point (k, K and the Kelvin
 * sign all give k; s, S and ſ give s; σ, ς and Σ give σ). Never changes the number of code points
 * and never normalises: the regex does neither.
 */
function foldCodePoint(char: string): string {
  let folded = foldedCodePoints.get(char);
  if (folded === undefined) {
    const lower = single(char.toLowerCase(), char);
    const upper = single(lower.toUpperCase(), lower);
    folded = single(upper.toLowerCase(), lower);
    if (foldedCodePoints.size < 65_536) foldedCodePoints.set(char, folded);
  }
  return folded;
}

export function foldCase(text: string): string {
  let folded = '';
  for (const char of text) folded += foldCodePoint(char);
  return folded;
}

/** The distinct grams of one search word (already free of whitespace); none when it is shorter than a gram. */
export function wordGrams(word: string): string[] {
  const chars = [...foldCase(word)];
  const grams = new Set<string>();
  for (let start = 0; start + GRAM_LENGTH <= chars.length; start++) {
    grams.add(chars.slice(start, start + GRAM_LENGTH).join(''));
  }
  return [...grams];
}

const WHITESPACE = /\s+/u;

/**
 * Every gram of every whitespace-separated token of every searchable field. A search word holds no
 * whitespace, so a match lies inside one token, and its grams are among that token's.
 */
export function documentGrams(text: SearchableText): string[] {
  const grams = new Set<string>();
  const fields = [text.name, text.short_description, text.brand_name, text.category_name, ...text.tags];
  for (const field of fields) {
    for (const token of field.split(WHITESPACE)) {
      for (const gram of wordGrams(token)) grams.add(gram);
    }
  }
  return [...grams].sort();
}

/**
 * What the grams were made from, stored beside them: grams whose hash is not that of the
 * document's text now (copied with a document, or left behind by an edit of another system) are
 * stale. The rules' version is part of it, so new rules make every hash stale.
 */
export function searchTextHash(text: SearchableText): string {
  const fields = [
    SEARCH_GRAMS_VERSION,
    text.name,
    text.short_description,
    text.brand_name,
    text.category_name,
    text.tags,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('base64url').slice(0, 22);
}
