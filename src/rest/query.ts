import { z } from 'zod';
import {
  isStorableText,
  MAX_TERM_LENGTH,
  normaliseText,
  unstorableTextMessage,
} from '../catalog/product-query';
import type { FieldErrors } from '../errors';

/**
 * Query strings read the way PHP and Laravel read them, and the zod field types of the /api/v1
 * query schemas. A field's schema is its validation, its Laravel message and its OpenAPI
 * description at once.
 */

/** A query value as PHP sees it: the last `name=` wins; `name[]=` or `name[key]=` make an array. */
export type QueryValue = string | string[];

export function readQuery(query: URLSearchParams): Record<string, QueryValue> {
  const values: Record<string, QueryValue> = {};
  for (const [key, value] of query) {
    const bracket = key.indexOf('[');
    if (bracket > 0) {
      const name = key.slice(0, bracket);
      const previous = values[name];
      values[name] = Array.isArray(previous) ? [...previous.slice(0, 99), value] : [value];
    } else {
      values[key] = value;
    }
  }
  return values;
}

/** `per_page` → "per page": the Laravel attribute name in messages. */
const attribute = (name: string) => name.replace(/_/g, ' ');

/**
 * Canonical decimal integers only: no leading zeros, no exponent or hex, and no `+` (a product decision,
 * stricter than PHP's FILTER_VALIDATE_INT: `+2` answers 422). A `-` stays so `-1` reads "at least 1".
 */
const WHOLE_NUMBER = /^-?(0|[1-9]\d*)$/;

/** Laravel trims strings and turns blank ones into null ("use the default"); arrays pass through. */
function trimmed(value: unknown): unknown {
  return typeof value === 'string' ? normaliseText(value) : value;
}

function asInteger(value: unknown): unknown {
  const text = trimmed(value);
  if (typeof text !== 'string' || !WHOLE_NUMBER.test(text)) return text;
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : text;
}

export interface IntegerFieldOptions {
  max: number;
  default: number;
  description: string;
}

/** Laravel `nullable|integer|min:1|max:N`. */
export function integerField(name: string, { max, default: fallback, description }: IntegerFieldOptions) {
  const label = attribute(name);
  return z
    .preprocess(
      asInteger,
      z
        .int({ error: `The ${label} field must be an integer.` })
        .min(1, { error: `The ${label} field must be at least 1.` })
        .max(max, { error: `The ${label} field must not be greater than ${max}.` })
        .optional(),
    )
    .meta({ default: fallback, param: { description } });
}

export interface TextFieldOptions {
  required?: boolean;
  description: string;
}

/**
 * Laravel `string|max:200` (counted in characters, not UTF-16 units), `required` or `nullable`, and
 * text the database can take (no NUL, no unpaired surrogate).
 */
export function textField(name: string, { required = false, description }: TextFieldOptions) {
  const label = attribute(name);
  const text = z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `The ${label} field is required.`
          : `The ${label} field must be a string.`,
    })
    .refine(isStorableText, { error: unstorableTextMessage(name), abort: true })
    .refine((value) => [...value].length <= MAX_TERM_LENGTH, {
      error: `The ${label} field must not be greater than ${MAX_TERM_LENGTH} characters.`,
      abort: true,
    })
    .meta({ maxLength: MAX_TERM_LENGTH });
  const field = z.preprocess(
    trimmed,
    required ? text.meta({ minLength: 1, pattern: '\\S' }) : text.optional(),
  );
  return field.meta({ param: { description } });
}

/**
 * Validated values as a query string, in the schema's order (zod builds its output from the
 * schema, not the request): one spelling for every way of writing one request (order, repeats,
 * blanks, padding, unknown parameters), so it keys cached pages and builds their links.
 */
export function canonicalQuery(values: object): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(values))
    if (typeof value === 'string' || typeof value === 'number') query.set(name, String(value));
  return query;
}

export type QueryResult<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/** Validates a query against its schema; errors keep the schema's field order, one message per field. */
export function parseQuery<T>(schema: z.ZodType<T>, query: Record<string, QueryValue>): QueryResult<T> {
  const result = schema.safeParse(query);
  if (result.success) return { ok: true, value: result.data };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = String(issue.path[0] ?? 'query');
    errors[field] ??= [issue.message];
  }
  return { ok: false, errors };
}
