import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/** Stored GraphQL results answered as their stored bytes (src/graphql-response-cache.ts). */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { RESPONSE_CACHE_TTL_MS: '60000' } });
});
afterAll(() => server.stop());

const PAGE =
  'query Page($page: Int) { productPage(page: $page, perPage: 3) { items { databaseId name } total } }';

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { response, text: await response.text() };
}

/** The first request stores in the background: ask until the answer is a HIT. */
async function untilHit(send: () => Promise<{ response: Response; text: string }>) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const reply = await send();
    if (reply.response.headers.get('x-cache') === 'HIT') return reply;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('never a HIT');
}

describe('stored GraphQL results', () => {
  it('answer with the same bytes and public headers as the executed result', async () => {
    const body = { query: PAGE, variables: { page: 2 } };
    const first = await post(body);
    expect(first.response.headers.get('x-cache')).toBe('MISS');
    const hit = await untilHit(() => post(body));
    expect(hit.text).toBe(first.text);
    expect(hit.response.status).toBe(200);
    expect(hit.response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(hit.response.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
    expect(hit.response.headers.get('vary')).toBe('Accept, Accept-Encoding');
    // Other variables are another result.
    expect((await post({ query: PAGE, variables: { page: 3 } })).response.headers.get('x-cache')).toBe(
      'MISS',
    );
  });

  it('keep the media type a client asked for, and serve batches whole', async () => {
    const body = { query: PAGE, variables: { page: 4 } };
    const plain = await untilHit(() => post(body));
    const typed = await post(body, { accept: 'application/graphql-response+json' });
    expect(typed.response.headers.get('content-type')).toBe(
      'application/graphql-response+json; charset=utf-8',
    );
    expect(typed.text).toBe(plain.text);
    const batch = await post([body, body]);
    expect(JSON.parse(batch.text)).toEqual([JSON.parse(plain.text), JSON.parse(plain.text)]);
  });

  it('answer a GET with an ETag, and 304 to a client holding it', async () => {
    const path = `/graphql?query=${encodeURIComponent(PAGE)}&variables=${encodeURIComponent('{"page":5}')}`;
    const get = async (headers: Record<string, string> = {}) => {
      const response = await server.request(path, {
        headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1', ...headers },
      });
      return { response, text: await response.text() };
    };
    const hit = await untilHit(() => get());
    const etag = hit.response.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get({ 'if-none-match': etag! });
    expect(again.response.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('never exist for what consulted the viewer, nor reach another caller', async () => {
    const query = '{ viewer { customerId } }';
    const alice = bearer(await mintToken({ sub: 'alice' }));
    const bob = bearer(await mintToken({ sub: 'bob' }));
    for (let round = 0; round < 3; round++) {
      const mine = await post({ query }, alice);
      expect(mine.response.headers.get('x-cache')).toBe('MISS');
      expect(mine.response.headers.get('cache-control')).toBe('private, no-store');
      expect(JSON.parse(mine.text)).toEqual({ data: { viewer: { customerId: 'alice' } } });
      const theirs = await post({ query }, bob);
      expect(JSON.parse(theirs.text)).toEqual({ data: { viewer: { customerId: 'bob' } } });
    }
  });
});
