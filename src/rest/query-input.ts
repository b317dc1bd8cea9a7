import {
  MAX_PAGE,
  MAX_PER_PAGE,
  checkBoundedInteger,
  checkRequired,
  checkTextLength,
  normaliseText,
} from '../catalog/product-query';
import type { FieldErrors } from '../errors';

/** Query-string parsing for the product endpoints; the rules themselves live in catalog/. */

export interface ProductListInput {
  page?: number;
  perPage?: number;
  search?: string;
  category?: string;
}

export interface ProductSearchInput {
  term: string;
  page?: number;
  perPage?: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/** PHP's FILTER_VALIDATE_INT, which Laravel's `integer` rule uses: no leading zeros. */
const WHOLE_NUMBER = /^[+-]?(0|[1-9]\d*)$/;

/** PHP keeps the last of repeated query parameters (`?page=1&page=2` is page 2); so do we. */
export function lastValue(query: URLSearchParams, name: string): string | null {
  return query.getAll(name).at(-1) ?? null;
}

/** Laravel's `integer` rule on a query value: absent or blank means "use the default". */
function integerParam(
  errors: FieldErrors,
  query: URLSearchParams,
  name: string,
  max: number,
): number | undefined {
  const raw = normaliseText(lastValue(query, name));
  if (raw === undefined) return undefined;
  const value = WHOLE_NUMBER.test(raw) ? Number(raw) : Number.NaN;
  checkBoundedInteger(errors, name, Number.isSafeInteger(value) ? value : Number.NaN, max);
  return value;
}

function pageParams(errors: FieldErrors, query: URLSearchParams) {
  const page = integerParam(errors, query, 'page', MAX_PAGE);
  const perPage = integerParam(errors, query, 'per_page', MAX_PER_PAGE);
  return { ...(page === undefined ? {} : { page }), ...(perPage === undefined ? {} : { perPage }) };
}

function result<T>(errors: FieldErrors, value: T): Parsed<T> {
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, value };
}

export function parseProductList(query: URLSearchParams): Parsed<ProductListInput> {
  const errors: FieldErrors = {};
  const search = normaliseText(lastValue(query, 'search'));
  const category = normaliseText(lastValue(query, 'category'));
  checkTextLength(errors, 'search', search);
  const pages = pageParams(errors, query);
  return result(errors, { ...pages, ...(search ? { search } : {}), ...(category ? { category } : {}) });
}

export function parseProductSearch(query: URLSearchParams): Parsed<ProductSearchInput> {
  const errors: FieldErrors = {};
  const term = normaliseText(lastValue(query, 'term'));
  checkRequired(errors, 'term', term);
  checkTextLength(errors, 'term', term);
  const pages = pageParams(errors, query);
  return result(errors, { term: term ?? '', ...pages });
}
