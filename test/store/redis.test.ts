import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/logger';
import { connectRedis, type SharedRedis } from '../../src/store/redis';
import { describeWithRedis } from '../support/describe-with-redis';
import { waitUntil } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';
import { startTestServer, type TestServer } from '../support/server';

describeWithRedis('the shared store client', () => {
  let redis: TestRedis;
  let shared: SharedRedis;

  beforeAll(async () => {
    redis = await startRedis();
    shared = connectRedis({ url: redis.url, logger: createLogger('silent') });
    expect(await waitUntil(() => shared.isReady(), 5_000)).toBe(true);
  });

  afterAll(async () => {
    await shared?.close();
    await redis?.stop();
  });

  it('fails fast while Redis is down and reconnects by itself when it returns', async () => {
    await shared.client.set('greeting', 'hello');
    expect(await shared.client.get('greeting')).toBe('hello');

    await redis.kill();
    expect(await waitUntil(() => !shared.isReady(), 5_000)).toBe(true);
    const started = Date.now();
    await expect(shared.client.get('greeting')).rejects.toThrow();
    // No offline queue: a command while disconnected does not wait for the reconnect.
    expect(Date.now() - started).toBeLessThan(500);

    await redis.restart();
    expect(await waitUntil(() => shared.isReady(), 10_000)).toBe(true);
    // A fresh, empty Redis on the same port.
    expect(await shared.client.get('greeting')).toBeNull();
  });
});

describeWithRedis('/readyz with a shared store', () => {
  let redis: TestRedis;
  let server: TestServer;

  beforeAll(async () => {
    redis = await startRedis();
    server = await startTestServer({ fixtures: false, env: { REDIS_URL: redis.url } });
  });

  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
  });

  const readiness = async () => {
    const response = await server.request('/readyz');
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('reports the store degraded but stays ready while Redis is down; the database decides', async () => {
    expect(await waitUntil(() => server.redis?.isReady() === true, 5_000)).toBe(true);
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', redis: 'ok' } });

    await redis.kill();
    expect(await waitUntil(() => server.redis?.isReady() === false, 5_000)).toBe(true);
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', redis: 'degraded' } });

    await redis.restart();
    expect(await waitUntil(() => server.redis?.isReady() === true, 10_000)).toBe(true);
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', redis: 'ok' } });
  });
});
