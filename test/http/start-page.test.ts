import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ifNoneMatchMatches } from '../../src/http/headers';
import { startTestServer, type TestServer } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ fixtures: false });
});
afterAll(() => server.stop());

describe('GET /', () => {
  it('answers browsers with an HTML page linking the APIs, the docs and the health endpoints', async () => {
    const response = await server.request('/', { headers: { accept: 'text/html,*/*;q=0.8' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await response.text();
    for (const path of ['/graphql', '/docs', '/api/v1/openapi.json', '/healthz', '/readyz']) {
      expect(page).toContain(`href="${path}"`);
    }
  });

  it('answers other clients with JSON whose links all answer', async () => {
    const response = await server.request('/');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as { links: { path: string }[] };
    expect(body.links.map((link) => link.path)).toEqual(
      expect.arrayContaining(['/graphql', '/docs', '/api/v1/openapi.json', '/healthz', '/readyz']),
    );
    for (const { path } of body.links) {
      const status = (await server.request(path, { headers: { accept: 'text/html' } })).status;
      expect([200, 503], path).toContain(status);
    }
    expect((await server.request('/', { method: 'HEAD' })).status).toBe(200);
    expect((await server.request('/nowhere')).status).toBe(404);
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
