import type { PageNumbers } from '../catalog/product-query';
import type { RequestFacts } from './endpoint';

/** The parameters a page link keeps from the request; `page` is set per link. */
const KEPT_PARAMETERS = new Set(['search', 'category', 'term', 'per_page']);

/** A `ProductPage` as the REST operations select it: the items plus the paginator's numbers. */
export interface GraphqlPage extends PageNumbers {
  items: unknown[];
}

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

/** Laravel's paginated resource shape, with absolute links on the base URL + the route's path. */
export function pageEnvelope<T>(
  { items, ...numbers }: PageNumbers & { items: T[] },
  request: RequestFacts,
): PageEnvelope<T> {
  // The validated values (one per parameter, trimmed, blank ones dropped), in the schema's order.
  const kept = [...request.query].filter(([name]) => KEPT_PARAMETERS.has(name));
  const pageUrl = (page: number): string => {
    const params = new URLSearchParams(kept);
    params.set('page', String(page));
    return `${request.baseUrl}${request.path}?${params}`;
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
