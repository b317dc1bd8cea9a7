import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithRedis } from '../support/describe-with-redis';
import { sharedStoreIs } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';
import { startTestServer, type TestServer } from '../support/server';

/**
 * /readyz and a Redis that stops answering with its connections open (SIGSTOP): it said
 * `"redis":"ok"` throughout, and 200 while the fail-closed limits answered every request 503.
 */
let redis: TestRedis;
let failOpen: TestServer;
let failClosed: TestServer;

beforeAll(async () => {
  redis = await startRedis();
  const limits = { REDIS_URL: redis.url, RATE_LIMIT_REQUESTS_PER_MINUTE: '600' };
  [failOpen, failClosed] = await Promise.all([
    startTestServer({ fixtures: false, env: { ...limits, RATE_LIMIT_FAIL_OPEN: 'true' } }),
    startTestServer({ fixtures: false, env: { ...limits, RATE_LIMIT_FAIL_OPEN: 'false' } }),
  ]);
  expect(await sharedStoreIs(true, [failOpen, failClosed])).toBe(true);
});

afterAll(async () => {
  redis?.resume();
  await Promise.all([failOpen?.stop(), failClosed?.stop()]);
  await redis?.stop();
});

async function readiness(server: TestServer): Promise<{ status: number; ms: number; body: unknown }> {
  const started = performance.now();
  const response = await server.request('/readyz');
  return { status: response.status, body: await response.json(), ms: performance.now() - started };
}

describeWithRedis('/readyz with a Redis that stopped answering', () => {
  it('says so within the command timeout, and is 503 where the limits fail closed', async () => {
    expect(await readiness(failOpen)).toMatchObject({ status: 200, body: { status: 'ready', redis: 'ok' } });
    expect(await readiness(failClosed)).toMatchObject({ status: 200, body: { redis: 'ok' } });

    redis.pause();
    try {
      const open = await readiness(failOpen);
      expect(open).toMatchObject({ status: 200, body: { status: 'ready', redis: 'degraded' } });
      // The command timeout is 150 ms; the database ping runs beside it.
      expect(open.ms).toBeLessThan(1_000);
      const closed = await readiness(failClosed);
      expect(closed).toMatchObject({ status: 503, body: { status: 'unavailable', reason: 'redis' } });
      // What the balancer is told matches what the API does.
      expect((await failClosed.request('/api/v1/products?per_page=1')).status).toBe(503);
    } finally {
      redis.resume();
    }

    const deadline = Date.now() + 5_000;
    while ((await readiness(failClosed)).status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await readiness(failClosed)).status).toBe(200);
    expect(await readiness(failOpen)).toMatchObject({ status: 200, body: { redis: 'ok' } });
  });
});
