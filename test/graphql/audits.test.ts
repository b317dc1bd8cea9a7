import { serverAudits, type AuditResult } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/** GraphQL over HTTP conformance (graphql-http's server audits) and the GraphiQL page on /graphql. */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

describe('graphql-http server audits', () => {
  it('passes every MUST audit against /graphql', async () => {
    // A non-browser client, so it sends the CSRF prevention header (README, "GraphQL in brief").
    const fetchFn: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-graphql-yoga-csrf', '1');
      return fetch(input, { ...init, headers });
    };
    const audits = serverAudits({ url: () => `${server.url}/graphql`, fetchFn });
    const results: AuditResult[] = [];
    for (const audit of audits) results.push(await audit.fn());

    const must = results.filter((result) => result.name.startsWith('MUST'));
    const failedMust = results.filter((result) => result.name.startsWith('MUST') && result.status !== 'ok');
    const warnings = results.filter((result) => result.status !== 'ok' && !result.name.startsWith('MUST'));
    console.log(
      `graphql-http audits: ${must.length - failedMust.length}/${must.length} MUST passed, ` +
        `${results.filter((result) => result.status === 'ok').length}/${results.length} in all, ` +
        `${warnings.length} SHOULD/MAY not met` +
        warnings.map((result) => `\n  - ${result.name}`).join(''),
    );
    expect(must.length).toBeGreaterThan(0);
    expect(
      failedMust.map((result) => `${result.name}: ${result.status === 'ok' ? '' : result.reason}`),
    ).toEqual([]);
  });
});

describe('GraphiQL', () => {
  it('serves the GraphiQL page to a browser, opening with the products query', async () => {
    const response = await server.request('/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toMatch(/graphiql/i);
    expect(html).toContain('products(first: 5)');
    expect(html).toContain('Storefront Gateway');
  });

  it('answers API clients with JSON, not the page', async () => {
    const response = await server.request('/graphql?query=%7B__typename%7D', {
      headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});
