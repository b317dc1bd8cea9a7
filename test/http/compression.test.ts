import { request as httpRequest } from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { negotiateEncoding } from '../../src/http/use-compression';
import { startTestServer, type TestServer } from '../support/server';

/** br and gzip by Accept-Encoding (issue 12): every compressed body decodes to the identity bytes. */

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let server: TestServer;
beforeAll(async () => {
  // The REST page cache on, as in production: its ETag/304 path must hold with compression.
  server = await startTestServer({ env: { RESPONSE_CACHE_TTL_MS: '60000' } });
});
afterAll(() => server.stop());

/** node:http, not fetch: fetch would decode the body and hide what went over the wire. */
function raw(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<RawReply>((resolve, reject) => {
    const request = httpRequest(
      `${server.url}${path}`,
      { method: init.method ?? 'GET', headers: init.headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(init.body);
  });
}

function decode(reply: RawReply): Buffer {
  const encoding = reply.headers['content-encoding'];
  if (encoding === 'br') return zlib.brotliDecompressSync(reply.body);
  if (encoding === 'gzip') return zlib.gunzipSync(reply.body);
  throw new Error(`not compressed: ${String(encoding)}`);
}

/** Fetches one representation per encoding and checks each against identity; returns the ratios. */
async function expectSameBytes(
  label: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ identity: RawReply; br: RawReply; gzip: RawReply }> {
  const fetchAs = (acceptEncoding: string) =>
    raw(path, { ...init, headers: { ...init.headers, 'accept-encoding': acceptEncoding } });
  const identity = await fetchAs('identity');
  const br = await fetchAs('gzip, deflate, br');
  const gzip = await fetchAs('gzip;q=1, br;q=0.5');
  expect(identity.status).toBe(200);
  expect(identity.headers['content-encoding']).toBeUndefined();
  expect(identity.body.length).toBeGreaterThan(1_024);
  for (const [reply, encoding] of [
    [br, 'br'],
    [gzip, 'gzip'],
  ] as const) {
    expect(reply.status).toBe(200);
    expect(reply.headers['content-encoding']).toBe(encoding);
    expect(reply.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(reply.headers['content-length'])).toBe(reply.body.length);
    expect(decode(reply).equals(identity.body)).toBe(true);
    expect(reply.headers['content-type']).toBe(identity.headers['content-type']);
  }
  expect(identity.headers.vary).toMatch(/accept-encoding/i);
  const ratio = (reply: RawReply) => (identity.body.length / reply.body.length).toFixed(1);
  console.log(
    `${label}: identity ${identity.body.length} B, br ${br.body.length} B (${ratio(br)}:1), ` +
      `gzip ${gzip.body.length} B (${ratio(gzip)}:1)`,
  );
  return { identity, br, gzip };
}

describe('negotiation', () => {
  it.each([
    [null, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0, br;q=0', undefined],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['deflate', undefined],
    ['GZIP', 'gzip'],
    [' br ; q=0.8 , gzip ; q=0.9', 'gzip'],
  ])('Accept-Encoding %j picks %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});

describe('compressed responses', () => {
  it('compresses a REST product page; its ETag turns weak and still gives 304', async () => {
    const { identity, br } = await expectSameBytes('REST product page', '/api/v1/products?per_page=20');
    const etag = identity.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(br.headers.etag).toBe(`W/${etag}`);

    const notModified = await raw('/api/v1/products?per_page=20', {
      headers: { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string },
    });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    expect(notModified.headers['content-encoding']).toBeUndefined();
    expect(notModified.headers.vary).toMatch(/accept-encoding/i);
    expect(notModified.headers.etag).toBe(br.headers.etag);
    // A client of identity bytes revalidates its strong ETag and keeps it.
    const identityNotModified = await raw('/api/v1/products?per_page=20', {
      headers: { 'accept-encoding': 'identity', 'if-none-match': etag },
    });
    expect(identityNotModified.status).toBe(304);
    expect(identityNotModified.headers.etag).toBe(etag);
  });

  it('compresses a GraphQL POST result', async () => {
    await expectSameBytes('GraphQL POST', '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({
        query:
          '{ products(first: 20) { edges { node { id name categoryName variant { price { formatted } } } } } }',
      }),
    });
  });

  it('compresses the GraphiQL page', async () => {
    const { identity } = await expectSameBytes('GraphiQL page', '/graphql', {
      headers: { accept: 'text/html' },
    });
    expect(identity.headers['content-type']).toMatch(/^text\/html/);
    expect(identity.body.toString('utf8')).toContain('Storefront Gateway');
  }, 60_000);

  it('compresses a /docs asset, and answers HEAD with the identity headers only', async () => {
    const path = '/docs/assets/swagger-ui.css';
    const { identity, br } = await expectSameBytes('/docs swagger-ui.css', path);
    expect(br.headers.etag).toBe(`W/${identity.headers.etag as string}`);

    const head = await raw(path, { method: 'HEAD', headers: { 'accept-encoding': 'br, gzip' } });
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBeUndefined();
    expect(head.headers['content-length']).toBe(String(identity.body.length));
    expect(head.body.length).toBe(0);
  });

  it('sends a body under the threshold as it is, with Vary', async () => {
    const tiny = await raw('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'br, gzip' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(tiny.status).toBe(200);
    expect(tiny.headers['content-encoding']).toBeUndefined();
    expect(tiny.headers.vary).toMatch(/accept-encoding/i);
    expect(JSON.parse(tiny.body.toString('utf8'))).toEqual({ data: { __typename: 'Query' } });
  });
});
