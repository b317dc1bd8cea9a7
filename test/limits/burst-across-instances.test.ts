import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithRedis } from '../support/describe-with-redis';
import { sharedStoreIs } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The closing note's figure: a burst of 200 requests, round-robin over 3 instances, against a limit
 * of 60 a minute — shared through Redis the fleet allows exactly 60; counted per process, 3 × 60.
 */

const LIMIT = 60;
const BURST = 200;
const CONCURRENCY = 20;

async function burst(servers: TestServer[]): Promise<{ allowed: number; refused: number }> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < BURST) {
      const index = next++;
      const server = servers[index % servers.length]!;
      const response = await server.request(index % 2 ? '/api/v1/products?per_page=1' : '/api/v1/products/1');
      await response.arrayBuffer();
      statuses.push(response.status);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return {
    allowed: statuses.filter((status) => status !== 429).length,
    refused: statuses.filter((status) => status === 429).length,
  };
}

describeWithRedis('a burst against the limit across three instances', () => {
  let redis: TestRedis;
  let shared: TestServer[] = [];
  let alone: TestServer[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    const env = { RATE_LIMIT_REQUESTS_PER_MINUTE: String(LIMIT) };
    shared = await Promise.all(
      [1, 2, 3].map(() => startTestServer({ env: { ...env, REDIS_URL: redis.url } })),
    );
    alone = await Promise.all([1, 2, 3].map(() => startTestServer({ env })));
    expect(await sharedStoreIs(true, shared)).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...shared, ...alone].map((server) => server.stop()));
    await redis?.stop();
  });

  it('allows exactly the limit with Redis, and the limit per instance without', async () => {
    const withRedis = await burst(shared);
    const perProcess = await burst(alone);
    console.log(
      `burst of ${BURST} round-robin over 3 instances, limit ${LIMIT}/min: ` +
        `shared ${withRedis.allowed} allowed / ${withRedis.refused} × 429; ` +
        `per process ${perProcess.allowed} allowed / ${perProcess.refused} × 429`,
    );
    expect(withRedis).toEqual({ allowed: LIMIT, refused: BURST - LIMIT });
    expect(perProcess).toEqual({ allowed: 3 * LIMIT, refused: BURST - 3 * LIMIT });
  }, 60_000);
});
