/** The path template an API answers a path with ('/api/v1/products/{product}'), if any. */
export type ApiPathTemplate = (pathname: string) => string | undefined;

/** A low-cardinality name for a request path: the label of logs, metrics and trace spans. */
export type RouteLabel = (pathname: string) => string;

/** The route namer; the REST adapter's endpoint table names the /api/v1 paths (passed in: http/ sits below it). */
export function createRouteLabel(apiPathTemplate: ApiPathTemplate): RouteLabel {
  return (pathname) => {
    if (pathname === '/' || pathname === '/graphql') return pathname;
    if (pathname === '/api/v1/openapi.json') return pathname;
    if (pathname.startsWith('/api/v1/')) {
      // One trailing slash ignored.
      return apiPathTemplate(pathname.replace(/(.)\/$/, '$1')) ?? '/api/v1/*';
    }
    if (pathname === '/docs' || pathname.startsWith('/docs/')) return '/docs';
    if (pathname.startsWith('/graphiql/')) return '/graphiql';
    if (['/healthz', '/readyz', '/metrics'].includes(pathname)) return pathname;
    return 'unmatched';
  };
}
