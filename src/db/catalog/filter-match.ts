import escapeStringRegexp from 'escape-string-regexp';
import type { Document } from 'mongodb';
import { categoryKey, type ProductCriteria } from './product-plans';
import { SEARCHABLE_FIELDS } from './product-search';
import { READABLE_PRODUCT } from './readable-filter';

/**
 * A product filter's `$match` (src/db/catalog/product-plans.ts) decided in JavaScript, for one document as
 * the log hands it on: true, false, or 'unsure' where the database might decide otherwise. Only a
 * sure answer may move a kept total or spare a cached answer; 'unsure' drops them.
 */
export type Match = boolean | 'unsure';

const both = (a: Match, b: Match): Match => (a === false || b === false ? false : a === true ? b : 'unsure');
const either = (a: Match, b: Match): Match => (a === true || b === true ? true : a === false ? b : 'unsure');

/**
 * Values whose matching this module does not model: a stored regex or symbol (MongoDB compares
 * them as their own types), code, and a nested array (matched as a whole, not by its elements).
 */
function modelled(value: unknown): boolean {
  if (value instanceof RegExp) return false;
  const bsonType = (value as { _bsontype?: string } | null)?._bsontype;
  return bsonType !== 'BSONRegExp' && bsonType !== 'BSONSymbol' && bsonType !== 'Code';
}

/** A field's values as a filter on it sees them: the value, or an array's elements (one level). */
function valuesOf(value: unknown): unknown[] | 'unsure' {
  const values = Array.isArray(value) ? value : [value];
  if (!values.every(modelled) || (Array.isArray(value) && value.some(Array.isArray))) return 'unsure';
  return values;
}

/**
 * Letters outside ASCII that Unicode case-folds to an ASCII letter (Kelvin sign, long s, dotted
 * and dotless i): PCRE may match them caselessly where JavaScript's `i` flag does not.
 */
const FOLDS_TO_ASCII = /[\u017f\u212a\u0130\u0131]/;
const NON_ASCII = /[^\p{ASCII}]/u;

/** One word against one field: an escaped, case-insensitive regex over a string or array's strings. */
function wordInField(pattern: RegExp, value: unknown): Match {
  const values = valuesOf(value);
  if (values === 'unsure') return 'unsure';
  let match: Match = false;
  for (const text of values) {
    if (typeof text !== 'string') continue;
    if (pattern.test(text)) return true;
    if (FOLDS_TO_ASCII.test(text)) match = 'unsure';
  }
  return match;
}

function wordMatch(word: string, doc: Document): Match {
  // JavaScript and PCRE may fold letters outside ASCII differently.
  if (NON_ASCII.test(word)) return 'unsure';
  const pattern = new RegExp(escapeStringRegexp(word), 'i');
  return SEARCHABLE_FIELDS.reduce<Match>(
    (match, field) => either(match, wordInField(pattern, doc[field])),
    false,
  );
}

function categoryMatch(key: string, doc: Document): Match {
  const values = valuesOf(doc.category_key);
  return values === 'unsure' ? 'unsure' : values.includes(key);
}

/** productFilter(criteria) (what a page lists, readable or not) for one document. */
export function listMatch(criteria: ProductCriteria, doc: Document): Match {
  let match: Match =
    criteria.category === undefined ? true : categoryMatch(categoryKey(criteria.category), doc);
  for (const word of criteria.words) match = both(match, wordMatch(word, doc));
  return match;
}

/** The `$type` alias of a value as the driver decodes it (a number: both aliases a set lists). */
function typeAliases(value: unknown): string[] {
  if (typeof value === 'string') return ['string'];
  if (typeof value === 'boolean') return ['bool'];
  if (typeof value === 'number') return Number.isInteger(value) ? ['int', 'long', 'double'] : ['double'];
  const bsonType = (value as { _bsontype?: string } | null)?._bsontype;
  return bsonType === 'Decimal128'
    ? ['decimal']
    : bsonType === 'Long'
      ? ['long']
      : bsonType === 'Double'
        ? ['double']
        : [];
}

/** A dotted path's value; 'unsure' where it passes through an array (MongoDB then looks inside). */
function atPath(doc: Document, path: string): unknown {
  let value: unknown = doc;
  for (const key of path.split('.')) {
    if (Array.isArray(value)) return 'unsure';
    value = value !== null && typeof value === 'object' ? (value as Document)[key] : undefined;
  }
  return value;
}

/** READABLE_PRODUCT for one document: what counts (and groups) leave out. */
export function readableMatch(doc: Document): Match {
  return Object.entries(READABLE_PRODUCT as Record<string, { $type: string[] }>).reduce<Match>(
    (match, [path, { $type }]) => {
      const value = atPath(doc, path);
      if (value === 'unsure' || Array.isArray(value)) return both(match, 'unsure');
      return both(
        match,
        typeAliases(value).some((alias) => $type.includes(alias)),
      );
    },
    true,
  );
}

/** countFilter(criteria) (what a total counts) for one document. */
export function countMatch(criteria: ProductCriteria, doc: Document): Match {
  return both(listMatch(criteria, doc), readableMatch(doc));
}
