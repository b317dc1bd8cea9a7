import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * The /api/v1 operations spend the client's cost budget by what they make the database do, as
 * GraphQL documents do (issue 28 row 8: REST was never charged, and one client held 1.75 of the
 * database's 2 cores with 30-word and 1-character searches within the request limit).
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_COST_PER_MINUTE: '100000' } });
});
afterAll(() => server?.stop());

const words = (count: number, length = 4) =>
  Array.from({ length: count }, (_, index) => `w${String(index).padStart(length - 1, 'x')}`).join(' ');

async function get(path: string, headers: Record<string, string> = {}) {
  const response = await server.request(path, { headers });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

describe('REST priced by its database work', () => {
  it('refuses a client’s second 30-word search with 429 and Retry-After; another client is unaffected', async () => {
    const alice = bearer(await mintToken({ sub: 'alice-rest-cost' }));
    const search = `/api/v1/products/search?term=${encodeURIComponent(words(30))}`;
    expect((await get(search, alice)).status).toBe(200);
    // Before: every one answered 200, whatever the budget.
    const refused = await get(search, alice);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toEqual({ message: 'Too Many Attempts.' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-limit')).toBe('100000');

    const bob = bearer(await mintToken({ sub: 'bob-rest-cost' }));
    expect((await get(search, bob)).status).toBe(200);
  });

  it('prices words of 1–2 characters (a scan each) above longer ones, and plain pages cheaply', async () => {
    const carol = bearer(await mintToken({ sub: 'carol-rest-cost' }));
    // Three one-character words: three scans besides the search's own.
    const short = `/api/v1/products/search?term=${encodeURIComponent('a b c')}`;
    expect((await get(short, carol)).status).toBe(200);
    expect((await get(short, carol)).status).toBe(429);

    const dave = bearer(await mintToken({ sub: 'dave-rest-cost' }));
    for (let index = 0; index < 20; index++) {
      expect((await get(`/api/v1/products?per_page=5&page=${index + 1}`, dave)).status).toBe(200);
    }
  });
});
