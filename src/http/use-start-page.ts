import { SECURITY_HEADERS } from './headers';
import { Response } from './fetch-api';
import type { Edge } from './router';
import {
  liveOrdersCommands,
  SAMPLE_QUERY,
  SERVER_SUMMARY,
  START_PAGE_CSP,
  sampleCommands,
  startPageHtml,
  startSections,
  type StartPageFacts,
} from './start-page';

export interface StartPageOptions {
  /** Whether GraphiQL is served (it is with introspection); the page says so. Default true. */
  graphiql?: boolean;
  /** Whether /graphql runs documents it has not seen (not trusted-only); default true. */
  adHocQueries?: boolean;
  /** /metrics as served; default 'off'. */
  metrics?: StartPageFacts['metrics'];
  /** The database the data lives in, in words; default: the one MONGODB_URI names. */
  database?: string;
  /** Origin of the copyable commands (PUBLIC_BASE_URL); default: the request's. */
  publicBaseUrl?: string;
  /** Show the live-orders demo: development only (npm run simulate refuses production); default false. */
  liveOrdersDemo?: boolean;
}

/** `GET /`: what this server is and where to go, HTML for browsers and JSON for everything else. */
export function startPageEdge({
  graphiql = true,
  adHocQueries = true,
  metrics = 'off',
  database = 'the MongoDB-compatible database that MONGODB_URI names',
  publicBaseUrl,
  liveOrdersDemo = false,
}: StartPageOptions = {}): Edge {
  const facts: StartPageFacts = { graphiql, adHocQueries, metrics, database, liveOrdersDemo };
  const links = startSections(facts).flatMap((section) => section.links);
  const json = (origin: string) =>
    JSON.stringify({
      name: 'Storefront Gateway',
      description: SERVER_SUMMARY,
      database,
      links,
      ...(adHocQueries ? { sampleQuery: SAMPLE_QUERY } : {}),
      sampleCommands: sampleCommands(origin, facts),
      ...(liveOrdersDemo ? { liveOrdersCommands: liveOrdersCommands(origin) } : {}),
    });
  // With PUBLIC_BASE_URL (always in production) both bodies are built once.
  const fixed = publicBaseUrl
    ? { html: startPageHtml(publicBaseUrl, facts), json: json(publicBaseUrl) }
    : undefined;
  const answer = (request: Request, url: URL) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return;
    const wantsHtml = request.headers.get('accept')?.includes('text/html') ?? false;
    const headers = wantsHtml
      ? {
          ...SECURITY_HEADERS,
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': START_PAGE_CSP,
        }
      : { 'content-type': 'application/json; charset=utf-8' };
    let body: string | null = null;
    if (request.method === 'GET') {
      if (wantsHtml) body = fixed?.html ?? startPageHtml(url.origin, facts);
      else body = fixed?.json ?? json(url.origin);
    }
    return new Response(body, { status: 200, headers: { ...headers, vary: 'accept' } });
  };
  return { routes: { paths: { '/': answer } } };
}
