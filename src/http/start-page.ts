import { createHash } from 'node:crypto';
import { parse, print } from 'graphql';

/** What the start page at `/` says: what this server is, where to go, and one request to try. */

export interface StartPageFacts {
  /** GraphiQL is served at /graphql (introspection on, not trusted-only). */
  graphiql: boolean;
  /** /graphql runs documents it has not seen before (not PERSISTED_OPERATIONS=trusted-only). */
  adHocQueries: boolean;
  /** /metrics as served: open, behind METRICS_TOKEN, or not at all. */
  metrics: 'open' | 'token' | 'off';
  /** The database the data lives in, in words, from the process that opened it. */
  database: string;
  /** Development with ad-hoc queries: the live-orders demo (npm run token and simulate) works here. */
  liveOrdersDemo: boolean;
}

export interface StartLink {
  path: string;
  title: string;
}

export interface StartSection {
  heading: string;
  links: StartLink[];
}

/** A query the fixtures answer, short enough to read in a shell line. */
export const SAMPLE_QUERY =
  '{ products(first: 3) { edges { node { name variant { price { formatted } } } } } }';
export const SAMPLE_REST_PATH = '/api/v1/products/search?term=card';

export const SERVER_SUMMARY =
  'One server for a digital-goods store: a GraphQL API and the /api/v1 REST contract over one MongoDB database.';

export function startSections({ graphiql, metrics }: StartPageFacts): StartSection[] {
  const operations: StartLink[] = [
    { path: '/healthz', title: 'Liveness: the process is up.' },
    { path: '/readyz', title: 'Readiness: the database answers (503 while it does not, or while draining).' },
  ];
  if (metrics !== 'off') {
    operations.push({
      path: '/metrics',
      title: `Prometheus metrics${metrics === 'token' ? ' (needs METRICS_TOKEN as a bearer token)' : ''}.`,
    });
  }
  return [
    {
      heading: 'GraphQL',
      links: [
        {
          path: '/graphql',
          title: graphiql
            ? 'The GraphQL endpoint; in a browser, GraphiQL with the schema and a first query.'
            : 'The GraphQL endpoint: POST a JSON body {"query": …}.',
        },
      ],
    },
    {
      heading: 'REST (/api/v1)',
      links: [
        {
          path: '/docs',
          title: 'The REST API reference (Swagger UI): every endpoint, tried in the browser.',
        },
        { path: '/api/v1/openapi.json', title: 'The OpenAPI 3.1 document, for client generators.' },
        {
          path: '/api/v1/products',
          title: 'The catalogue a page at a time (page, per_page, search, category).',
        },
        { path: SAMPLE_REST_PATH, title: 'Products that match a term.' },
      ],
    },
    { heading: 'Operations', links: operations },
  ];
}

/** GraphiQL opens it laid out over several lines. */
export const GRAPHIQL_SAMPLE_PATH = `/graphql?query=${encodeURIComponent(print(parse(SAMPLE_QUERY)))}`;

/** One shell line each; single quotes are safe since neither the query nor a URL holds one. */
export function sampleCommands(origin: string, { adHocQueries }: StartPageFacts): string[] {
  const graphql = `curl -s '${origin}/graphql' -H 'content-type: application/json' -d '${JSON.stringify({ query: SAMPLE_QUERY })}'`;
  const rest = `curl -s '${origin}${SAMPLE_REST_PATH}'`;
  return adHocQueries ? [graphql, rest] : [rest];
}

/** An order of cus_alice in the sample fixtures, as the README's demo uses. */
export const DEMO_ORDER_ULID = '01KE78KGFSQ4ZC7N2XW8RTB3MD';

/**
 * The live-orders demo for a second terminal, beside the running server: the README's `curl -N`
 * subscription in the background, then `npm run simulate`, which finds this server's database by
 * itself; each step it writes arrives as an event in the same terminal.
 */
export function liveOrdersCommands(origin: string): string[] {
  const subscription = JSON.stringify({
    query: `subscription { order(ulid: "${DEMO_ORDER_ULID}") { ulid fulfillmentStatus } }`,
  });
  return [
    'TOKEN=$(npm run --silent token -- --sub cus_alice)',
    `curl -N -H 'accept: text/event-stream' -H 'content-type: application/json' -H "authorization: Bearer $TOKEN" -d '${subscription}' ${origin}/graphql &`,
    `npm run simulate -- --ulid ${DEMO_ORDER_ULID}; sleep 2; kill $!`,
  ];
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** Small, no external assets; light and dark follow the system. */
const STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5b6474; --bg: #f7f8fa; --card: #fff;
  --line: #dfe3ea; --accent: #0b63ce; --code: #eef1f5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ef; --muted: #9aa3b2; --bg: #12151b;
  --card: #1a1e26; --line: #2b313c; --accent: #6aa8ff; --code: #232833; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 52rem; margin: 0 auto; padding: 2.5rem 1.25rem 3rem; }
h1 { font-size: 1.9rem; margin: 0 0 .25rem; letter-spacing: -.01em; }
h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .08em; color: var(--muted); margin: 2rem 0 .6rem; }
p { margin: .4rem 0; }
.lead { font-size: 1.1rem; color: var(--muted); }
.db { margin-top: .8rem; padding: .5rem .9rem; border-left: 3px solid var(--accent);
  background: var(--card); font-size: .95rem; }
ul { list-style: none; margin: 0; padding: 0; border: 1px solid var(--line); border-radius: 10px;
  background: var(--card); }
li { padding: .6rem 1rem; border-top: 1px solid var(--line); display: grid; gap: .2rem 1rem;
  grid-template-columns: minmax(12rem, 19rem) 1fr; }
@media (max-width: 40rem) { li { grid-template-columns: 1fr; } }
li:first-child { border-top: 0; }
li a { overflow-wrap: anywhere; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .92rem; }
li span { color: var(--muted); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
pre { margin: .5rem 0; padding: .8rem 1rem; background: var(--code); border: 1px solid var(--line);
  border-radius: 8px; white-space: pre-wrap; word-break: break-all; font: .85rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .85rem; }
`;

/** The page's Content-Security-Policy: nothing but this one inline stylesheet. */
export const START_PAGE_CSP =
  `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function startPageHtml(origin: string, facts: StartPageFacts): string {
  const sections = startSections(facts)
    .map(
      ({ heading, links }) => `    <h2>${escapeHtml(heading)}</h2>
    <ul>
${links
  .map(
    ({ path, title }) =>
      `      <li><a href="${escapeHtml(path)}">${escapeHtml(path)}</a><span>${escapeHtml(title)}</span></li>`,
  )
  .join('\n')}
    </ul>`,
    )
    .join('\n');
  const commands = sampleCommands(origin, facts)
    .map((command) => `    <pre><code>${escapeHtml(command)}</code></pre>`)
    .join('\n');
  const inGraphiql =
    facts.graphiql && facts.adHocQueries
      ? `\n    <p>Or <a href="${escapeHtml(GRAPHIQL_SAMPLE_PATH)}">open the same query in GraphiQL</a> and press Run.</p>`
      : '';
  const liveOrders = facts.liveOrdersDemo
    ? `
    <h2>Live orders</h2>
    <p>Subscriptions over Server-Sent Events (<code>order</code>, <code>viewerOrders</code>, <code>orders</code>)
      send an order again each time its status changes. With this server running, in a second terminal:</p>
    <pre class="demo"><code>${liveOrdersCommands(origin).map(escapeHtml).join('\n')}</code></pre>
    <p><code>npm run simulate</code> uses this server's database and moves the order one step every 2 s,
      as the shop's back office would; the subscription prints each step.</p>`
    : '';
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Storefront Gateway</title>
    <style>${STYLE}</style>
  </head>
  <body>
  <main>
    <h1>Storefront Gateway</h1>
    <p class="lead">${escapeHtml(SERVER_SUMMARY)}</p>
    <p class="db"><strong>Data</strong>: ${escapeHtml(facts.database)}</p>
    <h2>Try it</h2>
${commands}${inGraphiql}${liveOrders}
${sections}
    <footer>Orders need a bearer token (in development: <code>npm run token -- --sub cus_alice</code>):
      <code>/api/v1/orders/{order}</code>, or <code>{ viewer { orders(first: 5) { … } } }</code> in GraphQL.</footer>
  </main>
  </body>
</html>
`;
}
