import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGenerated } from '../../seed/load';
import { uniqueTerm } from '../support/attacks';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startTestServer, type TestServer } from '../support/server';

/**
 * A hot cached page while attackers keep the scan lane full (issue 28 row 9): when its entry
 * expires, the refill cannot get a turn, and the page that was there is served (x-cache STALE)
 * instead of a 503, for at most the TTL plus CACHE_STALE_WHILE_REVALIDATE_S.
 */
let database: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  database = await openTestDatabase('stale-pages');
  await loadGenerated(database.db, { seed: 9, products: 2_000, orders: 0 });
  server = await startTestServer({
    database,
    env: {
      RESPONSE_CACHE_TTL_MS: '300',
      CACHE_STALE_WHILE_REVALIDATE_S: '30',
      // A lane of one with a queue of two: a handful of scans keep it full.
      MONGODB_MAX_CONCURRENT_QUERIES: '1',
      MONGODB_MAX_QUEUED_QUERIES: '2',
    },
  });
});
afterAll(async () => {
  await server?.stop();
  await database?.close();
});

const PAGE_1 = '/api/v1/products?page=1&per_page=20';

describe('a hot page under a scan attack', () => {
  it('is answered every time, stale while its refill cannot run', async () => {
    let first = 0;
    for (let attempt = 0; attempt < 5 && first !== 200; attempt++) {
      const response = await server.request(PAGE_1);
      first = response.status;
      await response.arrayBuffer();
    }
    expect(first).toBe(200);

    let attacking = true;
    // Searches for words that occur nowhere: each scans every product, nothing is cached.
    const attackers = Array.from({ length: 12 }, async () => {
      while (attacking) {
        await server
          .request(`/api/v1/products/search?term=${uniqueTerm()}&per_page=100`)
          .then((response) => response.arrayBuffer())
          .catch(() => undefined);
      }
    });
    const statuses: number[] = [];
    const caches: string[] = [];
    try {
      await sleep(300);
      for (let index = 0; index < 30; index++) {
        const response = await server.request(PAGE_1);
        statuses.push(response.status);
        caches.push(response.headers.get('x-cache') ?? '');
        await response.arrayBuffer();
        await sleep(100);
      }
    } finally {
      attacking = false;
      await Promise.all(attackers);
    }
    // Before: once the entry expired, the refill queued in the full lane and answered 503.
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(caches).toContain('STALE');
  }, 60_000);
});
