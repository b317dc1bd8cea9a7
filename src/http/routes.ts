import { matchEndpoint } from '../rest/endpoints';

/** A low-cardinality name for a request path: the label of logs and metrics. */
export function routeLabel(pathname: string): string {
  if (pathname === '/' || pathname === '/graphql') return pathname;
  if (pathname === '/api/v1/openapi.json') return pathname;
  if (pathname.startsWith('/api/v1/')) {
    // The /api/v1 labels are the endpoint table's path templates (one trailing slash ignored).
    return matchEndpoint(pathname.replace(/(.)\/$/, '$1'))?.endpoint.path ?? '/api/v1/*';
  }
  if (pathname === '/docs' || pathname.startsWith('/docs/')) return '/docs';
  if (['/healthz', '/readyz', '/metrics'].includes(pathname)) return pathname;
  return 'unmatched';
}
