import { Decimal128 } from 'mongodb';

/**
 * Readers of one stored value each, in the shapes other writers give them (laravel-mongodb,
 * importers, the shell): the rules of the README's table "What the gateway reads". Each returns
 * the typed value or throws UnreadableValue naming what it found.
 */

export class UnreadableValue extends Error {}

function fail(field: string, value: unknown): never {
  const shown = value instanceof Date ? 'an invalid date' : JSON.stringify(value)?.slice(0, 40);
  throw new UnreadableValue(`${field}: ${shown ?? typeof value} is not accepted`);
}

const absent = (value: unknown): value is null | undefined => value === null || value === undefined;

/** A whole number (int32, int64 or an integral double). */
export function integer(field: string, value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  return fail(field, value);
}

export function positiveInteger(field: string, value: unknown): number {
  const number = integer(field, value);
  return number > 0 ? number : fail(field, value);
}

/** A whole number, or digits in a string or a Decimal128; null or missing is `fallback`. */
export function count(field: string, value: unknown, fallback: number): number {
  if (absent(value)) return fallback;
  const text = value instanceof Decimal128 || typeof value === 'string' ? value.toString().trim() : null;
  if (text !== null && /^-?\d{1,15}$/.test(text)) return Number(text);
  return integer(field, value);
}

/** Text; a number or a boolean becomes its text. Null or missing is `fallback`, or unreadable without one. */
export function text(field: string, value: unknown, fallback?: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (absent(value) && fallback !== undefined) return fallback;
  return fail(field, value);
}

export function nullableText(field: string, value: unknown): string | null {
  return absent(value) ? null : text(field, value);
}

/**
 * A list of texts; null or missing is empty, and so is an empty string (a form's blank field). A
 * single text (or number, or boolean) is a list of one: a writer that keeps one tag as a string is
 * matched by searches as one (a regex reads a string and a list of strings alike), and served so.
 */
export function textList(field: string, value: unknown): string[] {
  if (absent(value) || value === '') return [];
  if (Array.isArray(value)) return value.filter((entry) => !absent(entry)).map((entry) => text(field, entry));
  return [text(field, value)];
}

const TRUE_WORDS = new Set(['true', '1', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'no', '']);

/** A boolean, 0 or 1, or their words; null or missing is false. */
export function flag(field: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (absent(value)) return false;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
  }
  return fail(field, value);
}

/** A decimal in major units: `12.5`, `12.50`, `-3`; at most two fraction digits that are not zero. */
const DECIMAL = /^(-?)(\d{1,13})(?:\.(\d*))?$/;

/**
 * A money amount as integer minor units. A number is minor units already (the gateway's own
 * shape; a fraction is refused rather than guessed); a string or a Decimal128 is a decimal in
 * major units, converted without floating point ("12.50" and "12.5" are 1250).
 */
export function minorUnits(field: string, value: unknown): number {
  if (typeof value === 'number') return integer(field, value);
  if (!(typeof value === 'string' || value instanceof Decimal128)) return fail(field, value);
  const match = DECIMAL.exec(value.toString().trim());
  if (!match) return fail(field, value);
  const [, sign, whole, fraction = ''] = match;
  const cents = fraction.padEnd(2, '0');
  if (!/^\d{2}0*$/.test(cents)) return fail(field, value);
  const minor = Number(whole) * 100 + Number(cents.slice(0, 2));
  return sign === '-' && minor !== 0 ? -minor : minor;
}

/** A whole number within [min, max]. */
export function bounded(field: string, value: unknown, fallback: number, min: number, max: number): number {
  const number = count(field, value, fallback);
  return number >= min && number <= max ? number : fail(field, value);
}

export function currency(field: string, value: unknown): string {
  if (typeof value === 'string' && /^[A-Za-z]{3}$/.test(value.trim())) return value.trim().toUpperCase();
  return fail(field, value);
}

/** `2026-11-25 17:00:00` (Laravel's default; no zone means UTC), optionally with a fraction. */
const SQL_DATETIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)$/;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;
/** Epoch numbers below this are seconds (until the year 5138), others milliseconds. */
const EPOCH_SECONDS_BELOW = 1e11;

/** A BSON date; an ISO 8601 text with a zone; `YYYY-MM-DD HH:MM:SS` in UTC; epoch seconds or milliseconds. */
export function instant(field: string, value: unknown): Date {
  let date: Date | undefined;
  if (value instanceof Date) date = value;
  else if (typeof value === 'number' && Number.isFinite(value))
    date = new Date(Math.abs(value) < EPOCH_SECONDS_BELOW ? value * 1000 : value);
  else if (typeof value === 'string') {
    const trimmed = value.trim();
    const sql = SQL_DATETIME.exec(trimmed);
    if (sql) date = new Date(`${sql[1]}T${sql[2]}Z`);
    else if (ISO_WITH_ZONE.test(trimmed)) date = new Date(trimmed);
  }
  // Years 1–9999 only: ISO 8601 (and /api/v1's timestamps) write four digits.
  const year = date?.getUTCFullYear() ?? Number.NaN;
  if (!(year >= 1 && year <= 9999)) return fail(field, value);
  return date!;
}

/** One of `allowed`, whatever its case, spaces or underscores: `Non API`, `non_api`, `COMPLETED`. */
export function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  const folded = (word: string) =>
    word
      .trim()
      .toLowerCase()
      .replace(/[\s_]+/g, ' ');
  const found =
    typeof value === 'string' ? allowed.find((word) => folded(word) === folded(value)) : undefined;
  return found ?? fail(field, value);
}

/** An embedded document; anything else is unreadable. */
export function record(field: string, value: unknown): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date))
    return value as Record<string, unknown>;
  return fail(field, value);
}
