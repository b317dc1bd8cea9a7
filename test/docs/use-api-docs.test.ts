import { createServer, get as httpGet, type IncomingHttpHeaders, type Server } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApiDocs } from '../../src/docs/use-api-docs';

let server: Server;
let base: string;

beforeAll(async () => {
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: 'type Query { ok: Boolean! }',
      resolvers: { Query: { ok: () => true } },
    }),
    plugins: [useApiDocs({ serverUrl: 'https://shop.example.com' })],
    logging: false,
  });
  server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

const get = (path: string, init?: RequestInit) => fetch(`${base}${path}`, init);

/** The bytes as sent (fetch would decode them). */
function sentBytes(path: string, encoding: string): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(`${base}${path}`, { headers: { 'accept-encoding': encoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

function expectSecurityHeaders(response: Response) {
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("style-src 'self'");
  expect(csp).toContain("connect-src 'self' https://shop.example.com");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('x-frame-options')).toBe('DENY');
}

describe('useApiDocs over HTTP', () => {
  it('serves the OpenAPI document as UTF-8 JSON', async () => {
    const response = await get('/api/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expectSecurityHeaders(response);
    const document = (await response.json()) as { openapi: string; servers: unknown; paths: object };
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: 'https://shop.example.com' }]);
    expect(Object.keys(document.paths)).toHaveLength(3);
  });

  it('serves the docs page, referring only to assets of its own', async () => {
    const response = await get('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(response);
    const html = await response.text();
    expect(html).not.toMatch(/<script>|<style|\sstyle=|\son[a-z]+=/i);
    expect(html).toContain('data-spec-url="/api/v1/openapi.json"');

    const references = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(references.length).toBeGreaterThanOrEqual(5);
    for (const reference of references) expect(reference, reference).toMatch(/^\/(docs\/assets\/|api\/v1\/)/);

    for (const reference of references) {
      const asset = await get(reference);
      expect(asset.status, reference).toBe(200);
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
      await asset.arrayBuffer();
    }
    expect((await get('/docs/')).status).toBe(200);
  });

  it('serves the assets with their content types', async () => {
    const cases: [string, string][] = [
      ['/docs/assets/swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['/docs/assets/docs-init.js', 'text/javascript; charset=utf-8'],
      ['/docs/assets/swagger-ui.css', 'text/css; charset=utf-8'],
      ['/docs/assets/favicon-32x32.png', 'image/png'],
    ];
    for (const [path, type] of cases) {
      const response = await get(path, { headers: { 'accept-encoding': 'identity' } });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toBe(type);
      const body = new Uint8Array(await response.arrayBuffer());
      expect(body.byteLength, path).toBeGreaterThan(0);
      expect(response.headers.get('content-length'), path).toBe(String(body.byteLength));
    }
    const bundle = await (await get('/docs/assets/swagger-ui-bundle.js')).text();
    expect(bundle.length).toBeGreaterThan(500_000);
    expect(bundle).toContain('SwaggerUIBundle');
    const init = await (await get('/docs/assets/docs-init.js')).text();
    expect(init).toContain('validatorUrl: null');
  });

  it('sends text assets br or gzip, compressed once per process and shared by every request', async () => {
    const plain = new Uint8Array(await (await get('/docs/assets/swagger-ui-bundle.js')).arrayBuffer());
    for (const encoding of ['br', 'gzip'] as const) {
      const sent = await Promise.all(
        Array.from({ length: 3 }, () => sentBytes('/docs/assets/swagger-ui-bundle.js', encoding)),
      );
      for (const { headers, body } of sent) {
        expect(headers['content-encoding']).toBe(encoding);
        expect(headers.vary).toBe('Accept-Encoding');
        expect(headers.etag).toMatch(/^W\/"/);
        expect(headers['content-length']).toBe(String(body.byteLength));
        expect(body.equals(sent[0]!.body)).toBe(true);
      }
      const body = sent[0]!.body;
      expect(body.byteLength).toBeLessThan(plain.byteLength / 2);
      const decoded = encoding === 'br' ? brotliDecompressSync(body) : gunzipSync(body);
      expect(decoded.equals(Buffer.from(plain))).toBe(true);
    }
    // Images and HEAD go as they are.
    expect(
      (await sentBytes('/docs/assets/favicon-32x32.png', 'br')).headers['content-encoding'],
    ).toBeUndefined();
    const head = await get('/docs/assets/swagger-ui-bundle.js', {
      method: 'HEAD',
      headers: { 'accept-encoding': 'br' },
    });
    expect(head.headers.get('content-encoding')).toBeNull();
    expect(head.headers.get('content-length')).toBe(String(plain.byteLength));
  });

  it('answers HEAD with the headers and no body', async () => {
    const get200 = await get('/api/v1/openapi.json');
    const length = (await get200.arrayBuffer()).byteLength;
    const response = await get('/api/v1/openapi.json', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-length')).toBe(String(length));
    expect((await response.arrayBuffer()).byteLength).toBe(0);

    const page = await get('/docs', { method: 'HEAD' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expectSecurityHeaders(page);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await get('/docs/assets/swagger-ui.css');
    await first.arrayBuffer();
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^(?:W\/)?"[\w-]+"$/);
    const again = await get('/docs/assets/swagger-ui.css', { headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
  });

  it('answers 405 with Allow to other methods', async () => {
    for (const path of ['/api/v1/openapi.json', '/docs', '/docs/assets/swagger-ui.css']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const response = await get(path, { method, body: method === 'DELETE' ? undefined : '{}' });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.get('allow')).toBe('GET, HEAD');
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(await response.json()).toEqual({ message: 'Method Not Allowed.' });
      }
    }
  });

  it('answers 404 for unknown assets and leaves other paths to Yoga', async () => {
    const missing = await get('/docs/assets/../../etc/passwd');
    expect(missing.status).toBe(404);
    await missing.arrayBuffer();
    const unknown = await get('/docs/assets/swagger-ui.js.map');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ message: 'Not Found.' });

    const graphql = await get('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ ok }' }),
    });
    expect(await graphql.json()).toEqual({ data: { ok: true } });
  });
});
