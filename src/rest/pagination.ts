import type { PageNumbers } from '../catalog/product-query';

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

/** Laravel's paginated resource shape, with absolute links on `baseUrl` + the request path. */
export function pageEnvelope<T>(
  items: T[],
  numbers: PageNumbers,
  baseUrl: string,
  requestUrl: URL,
): PageEnvelope<T> {
  const kept = [...requestUrl.searchParams].filter(([name]) => KEPT_PARAMETERS.includes(name));
  const pageUrl = (page: number): string => {
    const query = new URLSearchParams(kept);
    query.set('page', String(page));
    return `${baseUrl}${requestUrl.pathname}?${query}`;
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
