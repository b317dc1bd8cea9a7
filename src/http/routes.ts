/** A low-cardinality name for a request path: the label of logs and metrics. */
export function routeLabel(pathname: string): string {
  if (pathname === '/' || pathname === '/graphql') return pathname;
  if (pathname === '/api/v1/products' || pathname === '/api/v1/products/search') return pathname;
  if (/^\/api\/v1\/orders\/[^/]+$/.test(pathname)) return '/api/v1/orders/{order}';
  if (pathname.startsWith('/api/v1/')) return pathname === '/api/v1/openapi.json' ? pathname : '/api/v1/*';
  if (pathname === '/docs' || pathname.startsWith('/docs/')) return '/docs';
  if (['/healthz', '/readyz', '/metrics'].includes(pathname)) return pathname;
  return 'unmatched';
}
