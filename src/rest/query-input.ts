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

const WHOLE_NUMBER = /^[+-]?\d+$/;

/** Laravel's `integer` rule on a query value: absent or blank means "use the default". */
function integerParam(
  errors: FieldErrors,
  query: URLSearchParams,
  name: string,
  max: number,
): number | undefined {
  const raw = normaliseText(query.get(name));
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
  const search = normaliseText(query.get('search'));
  const category = normaliseText(query.get('category'));
  checkTextLength(errors, 'search', search);
  const pages = pageParams(errors, query);
  return result(errors, { ...pages, ...(search ? { search } : {}), ...(category ? { category } : {}) });
}

export function parseProductSearch(query: URLSearchParams): Parsed<ProductSearchInput> {
  const errors: FieldErrors = {};
  const term = normaliseText(query.get('term'));
  checkRequired(errors, 'term', term);
  checkTextLength(errors, 'term', term);
  const pages = pageParams(errors, query);
  return result(errors, { term: term ?? '', ...pages });
}
