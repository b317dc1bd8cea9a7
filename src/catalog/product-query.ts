import type { FieldErrors } from '../errors';
import type { ProductCriteria } from '../db/catalog/product-plans';

/**
 * The rules for product list and search inputs, shared by REST (which receives strings) and
 * GraphQL (which receives typed arguments), so both APIs accept and reject exactly the same values.
 */

export const DEFAULT_PAGE = 1;
export const DEFAULT_PER_PAGE = 15;
export const MAX_PER_PAGE = 100;
export const MAX_PAGE = 2_147_483_647;
export const MAX_TERM_LENGTH = 200;
export const MAX_CONNECTION_SIZE = 100;
export const DEFAULT_CONNECTION_SIZE = 15;

/** `per_page` → "per page", `perPage` → "per page": the Laravel attribute name in messages. */
function label(field: string): string {
  return field
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
}

function add(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

function characterLength(text: string): number {
  return [...text].length;
}

/** Validates a whole number already parsed; `undefined` means "use the default". */
export function checkBoundedInteger(
  errors: FieldErrors,
  field: string,
  value: number | undefined,
  max: number,
): void {
  if (value === undefined) return;
  if (!Number.isSafeInteger(value)) add(errors, field, `The ${label(field)} field must be an integer.`);
  else if (value < 1) add(errors, field, `The ${label(field)} field must be at least 1.`);
  else if (value > max) add(errors, field, `The ${label(field)} field must not be greater than ${max}.`);
}

/** Text input: returns the trimmed text, or undefined when blank (Laravel trims and nulls blanks). */
export function normaliseText(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * What the database cannot take as text: NUL (PostgreSQL's text and regexes refuse it: a 500 once)
 * and UTF-16 surrogates without their pair (they have no UTF-8 form). With `u`, `\p{Cs}` matches
 * only unpaired ones.
 */
const UNSTORABLE = /[\0\p{Cs}]/u;

export const unstorableTextMessage = (field: string) =>
  `The ${label(field)} field must be text without NUL characters or unpaired surrogates.`;

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** Text the database will be asked about: storable, and at most MAX_TERM_LENGTH characters. */
export function checkText(errors: FieldErrors, field: string, value: string | undefined): void {
  if (value === undefined) return;
  if (!isStorableText(value)) add(errors, field, unstorableTextMessage(field));
  else if (characterLength(value) > MAX_TERM_LENGTH) {
    add(errors, field, `The ${label(field)} field must not be greater than ${MAX_TERM_LENGTH} characters.`);
  }
}

export function checkRequired(errors: FieldErrors, field: string, value: string | undefined): void {
  if (value === undefined) add(errors, field, `The ${label(field)} field is required.`);
}

/** Words of a search text, matched literally; a blank text has no words and filters nothing. */
export function searchWords(text: string | undefined): string[] {
  if (text === undefined) return [];
  return [...new Set(text.split(/\s+/u).filter(Boolean))];
}

export function criteriaFor(search: string | undefined, category: string | undefined): ProductCriteria {
  return { words: searchWords(search), ...(category === undefined ? {} : { category }) };
}

export interface PageNumbers {
  currentPage: number;
  perPage: number;
  total: number;
  lastPage: number;
  from: number | null;
  to: number | null;
}

/** Laravel's LengthAwarePaginator arithmetic. */
export function pageNumbers(page: number, perPage: number, total: number, itemCount: number): PageNumbers {
  const from = itemCount > 0 ? (page - 1) * perPage + 1 : null;
  return {
    currentPage: page,
    perPage,
    total,
    lastPage: Math.max(1, Math.ceil(total / perPage)),
    from,
    to: from === null ? null : from + itemCount - 1,
  };
}
