import type { Plugin } from 'graphql-yoga';
import { SECURITY_HEADERS } from './headers';
import { Response } from './fetch-api';

export interface StartPageOptions {
  /** Whether GraphiQL is served (it is with introspection); the page says so. Default true. */
  graphiql?: boolean;
}

interface Link {
  path: string;
  title: string;
}

/** What a person (or a client) arriving at `/` is looking for. */
function links(graphiql: boolean): Link[] {
  return [
    { path: '/graphql', title: graphiql ? 'GraphQL endpoint and GraphiQL' : 'GraphQL endpoint (POST)' },
    { path: '/docs', title: 'REST API documentation (Swagger UI)' },
    { path: '/api/v1/openapi.json', title: 'OpenAPI 3.1 document of /api/v1' },
    { path: '/api/v1/products', title: 'REST: the product catalogue' },
    { path: '/healthz', title: 'Liveness: the process is up' },
    { path: '/readyz', title: 'Readiness: the database answers' },
  ];
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function html(items: Link[]): string {
  const list = items
    .map(
      (link) =>
        `      <li><a href="${escapeHtml(link.path)}">${escapeHtml(link.path)}</a> — ${escapeHtml(link.title)}</li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Storefront Gateway</title>
  </head>
  <body>
    <h1>Storefront Gateway</h1>
    <p>A GraphQL API and the /api/v1 REST contract over one database.</p>
    <ul>
${list}
    </ul>
  </body>
</html>
`;
}

/** `GET /`: a small page of links, HTML for browsers and JSON for everything else. */
export function useStartPage({ graphiql = true }: StartPageOptions = {}): Plugin {
  const items = links(graphiql);
  const page = html(items);
  const json = JSON.stringify({ name: 'Storefront Gateway', links: items });
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== '/' || (request.method !== 'GET' && request.method !== 'HEAD')) return;
      const wantsHtml = request.headers.get('accept')?.includes('text/html') ?? false;
      const headers = wantsHtml
        ? {
            ...SECURITY_HEADERS,
            'content-type': 'text/html; charset=utf-8',
            'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
          }
        : { 'content-type': 'application/json; charset=utf-8' };
      const body = request.method === 'HEAD' ? null : wantsHtml ? page : json;
      endResponse(new Response(body, { status: 200, headers: { ...headers, vary: 'accept' } }));
    },
  };
}
