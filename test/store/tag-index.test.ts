import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithRedis } from '../support/describe-with-redis';
import { sharedStoreIs } from '../support/processes';
import { startServerOnRedis } from '../support/redis';
import type { TestServer } from '../support/server';

/**
 * A product's tag in Redis lists the cached entries that show it. Clients choose the entry keys
 * (`?utm=<unique>`): with members that never left the tag (its expiry renewed by every write), 45 s
 * of them left 73 members against 6 live entries. Members must expire with their entries.
 */
let fixture: Awaited<ReturnType<typeof startServerOnRedis>> | undefined;
let server: TestServer;
let inspect: Redis;
const TTL_MS = 300;

beforeAll(async () => {
  // Entries are kept stale for CACHE_STALE_WHILE_REVALIDATE_S past the TTL: 0 here, so they expire within the test.
  fixture = await startServerOnRedis({
    RESPONSE_CACHE_TTL_MS: String(TTL_MS),
    CACHE_STALE_WHILE_REVALIDATE_S: '0',
  });
  ({ server, inspect } = fixture);
  expect(await sharedStoreIs(true, [server])).toBe(true);
});

afterAll(() => fixture?.stop());

async function members(key: string): Promise<number> {
  const type = await inspect.type(key);
  if (type === 'set') return inspect.scard(key);
  if (type === 'zset') return inspect.zcard(key);
  return 0;
}

describeWithRedis("the cache's tag index", () => {
  it('holds about the live entries while clients invent keys', async () => {
    const started = Date.now();
    let sent = 0;
    while (sent < 120 || Date.now() - started < 2 * TTL_MS * 4) {
      // A key of its own per request, each a page holding product 1: unknown parameters no longer
      // make keys (issue 28), so the client varies a validated one.
      const response = await server.request(`/api/v1/products?per_page=${2 + (sent++ % 98)}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    // Entries are written in the background: let the last write land.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const tagKeys = (await inspect.keys('storefront:cache:tag*')).filter((key) => key.endsWith(':product:1'));
    expect(tagKeys.length).toBeGreaterThan(0);
    let tagged = 0;
    for (const key of tagKeys) tagged += await members(key);
    const live = (await inspect.keys('storefront:cache:entry:*')).length;
    // Before: a member per request (~120). Now the members written within the last TTL.
    expect(sent).toBeGreaterThanOrEqual(120);
    expect(tagged).toBeLessThanOrEqual(live + 20);
    expect(tagged).toBeLessThan(sent / 3);
  });
});
