import type { PageNumbers } from '../catalog/product-query';
import { lastValue } from './query-input';

/** The parameters a page link keeps from the request; `page` is set per link. */
const KEPT_PARAMETERS = ['search', 'category', 'term', 'per_page'];

export interface PageEnvelope<T> {
  data: T[];
  links: { first: string; last: string; prev: string | null; next: string | null };
  meta: {
    current_page: number;
    from: number | null;
    last_page: number;
    per_page: number;
    to: number | null;
    total: number;
  };
}

/** Laravel's paginated resource shape, with absolute links on `baseUrl` + the route's path. */
export function pageEnvelope<T>(
  items: T[],
  numbers: PageNumbers,
  baseUrl: string,
  path: string,
  query: URLSearchParams,
): PageEnvelope<T> {
  // Like Laravel: one value per parameter (the last), blank ones dropped, in the request's order.
  const kept = [...new Set(query.keys())]
    .filter((name) => KEPT_PARAMETERS.includes(name))
    .map((name) => [name, lastValue(query, name) ?? ''] as [string, string])
    .filter(([, value]) => value.trim() !== '');
  const pageUrl = (page: number): string => {
    const params = new URLSearchParams(kept);
    params.set('page', String(page));
    return `${baseUrl}${path}?${params}`;
  };
  const { currentPage, lastPage } = numbers;
  return {
    data: items,
    links: {
      first: pageUrl(1),
      last: pageUrl(lastPage),
      prev: currentPage > 1 ? pageUrl(currentPage - 1) : null,
      next: currentPage < lastPage ? pageUrl(currentPage + 1) : null,
    },
    meta: {
      current_page: currentPage,
      from: numbers.from,
      last_page: lastPage,
      per_page: numbers.perPage,
      to: numbers.to,
      total: numbers.total,
    },
  };
}
