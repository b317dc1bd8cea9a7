import { createHash } from 'node:crypto';
import { parse, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ifNoneMatchMatches } from '../../src/http/headers';
import {
  liveOrdersCommands,
  sampleCommands,
  startPageHtml,
  startSections,
  type StartPageFacts,
} from '../../src/http/start-page';
import { startTestServer, type TestServer } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const unescapeHtml = (text: string) =>
  text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));

/** Runs a `curl -s 'url' [-H 'header'] [-d 'body']` line as curl would, with fetch. */
function runCurl(command: string): Promise<Response> {
  const [program, ...tokens] = (command.match(/'[^']*'|\S+/g) ?? []).map((token) =>
    token.replace(/^'(.*)'$/, '$1'),
  );
  expect(program).toBe('curl');
  let url: string | undefined;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index] as string;
    if (token === '-s') continue;
    if (token === '-H') {
      const [name, ...value] = (tokens[++index] as string).split(':');
      headers[name!.trim()] = value.join(':').trim();
    } else if (token === '-d') body = tokens[++index];
    else if (!token.startsWith('-') && url === undefined) url = token;
    else throw new Error(`unexpected curl argument ${token}`);
  }
  return fetch(url!, { method: body === undefined ? 'GET' : 'POST', headers, body });
}

async function htmlPage(): Promise<{ response: Response; page: string }> {
  const response = await server.request('/', { headers: { accept: 'text/html,*/*;q=0.8' } });
  return { response, page: await response.text() };
}

describe('GET / in a browser', () => {
  it('is an HTML page whose only allowed resource is its own inline stylesheet', async () => {
    const { response, page } = await htmlPage();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => match[1] as string);
    expect(styles).toHaveLength(1);
    const hash = createHash('sha256').update(styles[0]!).digest('base64');
    expect(csp).toContain(`style-src 'sha256-${hash}'`);
    expect(page).not.toMatch(/<script|<link|<img|style="/);
  });

  it('says what the server is, the database it runs on, and links each API, the docs and health', async () => {
    const { page } = await htmlPage();
    expect(page).toContain('a GraphQL API and the /api/v1 REST contract');
    expect(page).toContain('the MongoDB-compatible database that MONGODB_URI names');
    for (const path of [
      '/graphql',
      '/docs',
      '/api/v1/openapi.json',
      '/api/v1/products',
      '/healthz',
      '/readyz',
      '/metrics',
    ]) {
      expect(page).toMatch(new RegExp(`<li><a href="${path}">${path}</a><span>[^<]+</span></li>`));
    }
  });

  it('shows sample commands that work as printed', async () => {
    const { page } = await htmlPage();
    const commands = [...page.matchAll(/<pre><code>([^<]*)<\/code><\/pre>/g)].map((match) =>
      unescapeHtml(match[1] as string),
    );
    expect(commands).toHaveLength(2);
    expect(commands.every((command) => command.startsWith(`curl -s '${server.url}/`))).toBe(true);

    const graphql = await runCurl(commands[0]!);
    expect(graphql.status).toBe(200);
    const { data, errors } = (await graphql.json()) as {
      data: { products: { edges: { node: { name: string; variant: { price: { formatted: string } } } }[] } };
      errors?: unknown;
    };
    expect(errors).toBeUndefined();
    expect(data.products.edges).toHaveLength(3);
    for (const { node } of data.products.edges) {
      expect(node.name).not.toBe('');
      expect(node.variant.price.formatted).toMatch(/\d/);
    }

    const rest = await runCurl(commands[1]!);
    expect(rest.status).toBe(200);
    const search = (await rest.json()) as { data: { name: string }[] };
    expect(search.data.length).toBeGreaterThan(0);
    expect(search.data.every((product) => /card/i.test(JSON.stringify(product)))).toBe(true);
  });

  it('opens the same query in GraphiQL', async () => {
    const { page } = await htmlPage();
    const href = unescapeHtml(/<a href="([^"]+)">open the same query in GraphiQL<\/a>/.exec(page)?.[1] ?? '');
    const query = new URL(href, server.url).searchParams.get('query') ?? '';
    const command = unescapeHtml(/<pre><code>(curl[^<]*\/graphql[^<]*)<\/code><\/pre>/.exec(page)?.[1] ?? '');
    const curlQuery = (JSON.parse(/-d '([^']*)'/.exec(command)?.[1] ?? '{}') as { query: string }).query;
    expect(print(parse(query))).toBe(print(parse(curlQuery)));
    const graphiql = await server.request(href, { headers: { accept: 'text/html' } });
    expect(graphiql.status).toBe(200);
    expect(await graphiql.text()).toContain('GraphiQL');
  });
});

describe('GET / for other clients', () => {
  it('answers JSON with the same facts and commands, and links that all answer', async () => {
    const response = await server.request('/');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as {
      database: string;
      links: { path: string }[];
      sampleCommands: string[];
    };
    expect(body.database).toContain('MONGODB_URI');
    expect(body.links.map((link) => link.path)).toEqual(
      expect.arrayContaining(['/graphql', '/docs', '/api/v1/openapi.json', '/healthz', '/readyz']),
    );
    for (const { path } of body.links) {
      const status = (await server.request(path, { headers: { accept: 'text/html' } })).status;
      expect([200, 503], path).toContain(status);
    }
    const { page } = await htmlPage();
    for (const command of body.sampleCommands) expect(unescapeHtml(page)).toContain(command);
    expect((await server.request('/', { method: 'HEAD' })).status).toBe(200);
    expect((await server.request('/nowhere')).status).toBe(404);
  });
});

describe('what the page offers follows the configuration', () => {
  const facts: StartPageFacts = {
    graphiql: true,
    adHocQueries: true,
    metrics: 'open',
    database: 'x',
    liveOrdersDemo: false,
  };
  const paths = (given: StartPageFacts) =>
    startSections(given).flatMap((section) => section.links.map((link) => link.path));

  it('lists /metrics only where it is served, and says when it needs a token', () => {
    expect(paths({ ...facts, metrics: 'off' })).not.toContain('/metrics');
    const token = startSections({ ...facts, metrics: 'token' })
      .flatMap((section) => section.links)
      .find((link) => link.path === '/metrics');
    expect(token?.title).toContain('METRICS_TOKEN');
  });

  it('shows the live-orders demo only where its tools work (development, ad-hoc queries)', () => {
    expect(startPageHtml('http://127.0.0.1:4000', facts)).not.toContain('Live orders');
    const page = unescapeHtml(startPageHtml('http://127.0.0.1:4000', { ...facts, liveOrdersDemo: true }));
    expect(page).toContain('<h2>Live orders</h2>');
    expect(page).toContain(liveOrdersCommands('http://127.0.0.1:4000').join('\n'));
  });

  it('offers no GraphQL sample where only trusted documents run', () => {
    const commands = sampleCommands('https://shop.example.com', { ...facts, adHocQueries: false });
    expect(commands).toEqual(["curl -s 'https://shop.example.com/api/v1/products/search?term=card'"]);
  });
});

describe('If-None-Match', () => {
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", W/"abc"', true],
    ['*', true],
    ['"abd"', false],
    ['', false],
  ])('%j matches "abc": %s', (header, expected) => {
    expect(ifNoneMatchMatches(header, '"abc"')).toBe(expected);
  });
});
