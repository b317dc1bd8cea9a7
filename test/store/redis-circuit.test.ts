import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../support/captured-log';
import { sharedStoreIs } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';
import { startTestServer, type TestServer } from '../support/server';

/**
 * A Redis that hangs with its connection open (SIGSTOP; issue 28 row 10): after a few command
 * timeouts the process skips it, so requests stop waiting 150 ms per command, and uses it again
 * once it answers.
 */
let redis: TestRedis;
let server: TestServer;
const log = capturedLog();

beforeAll(async () => {
  redis = await startRedis();
  server = await startTestServer({
    logger: log.logger,
    env: {
      REDIS_URL: redis.url,
      RATE_LIMIT_REQUESTS_PER_MINUTE: '100000',
      RATE_LIMIT_COST_PER_MINUTE: '100000000',
      RESPONSE_CACHE_TTL_MS: '10000',
    },
  });
  expect(await sharedStoreIs(true, [server])).toBe(true);
});

afterAll(async () => {
  redis?.resume();
  await server?.stop();
  await redis?.stop();
});

const PATHS = ['/api/v1/products?per_page=2', '/api/v1/products/search?term=gift&per_page=2'];

/** Milliseconds of each of `count` requests in a row (REST and GraphQL, rate-limited and cached). */
async function latencies(count: number): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const response =
      index % 3 === 2
        ? await server.request('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ products(first: 2) { edges { node { id } } } }' }),
          })
        : await server.request(PATHS[index % 2]!);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    times.push(performance.now() - started);
  }
  return times;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('a Redis that stops answering', () => {
  it('is skipped after a few timeouts, then used again once it answers', async () => {
    await latencies(6);
    redis.pause();
    try {
      await latencies(6); // the first timeouts open the circuit
      // Before: every request waited out 150 ms command timeouts (p50 4 → 308 ms in the issue).
      expect(median(await latencies(30))).toBeLessThan(100);
      expect(server.redis?.isReady()).toBe(false);
      expect(log.lines.some((line) => String(line.msg).includes('does not answer: skipping it'))).toBe(true);
      const metrics = await (await server.request('/metrics')).text();
      expect(metrics).toMatch(/^redis_circuit_trips_total [1-9]/m);
      expect(metrics).toMatch(/^redis_available 0/m);
    } finally {
      redis.resume();
    }
    // A PING every cool-down (2 s) finds it again.
    const deadline = Date.now() + 8_000;
    while (!server.redis?.isReady() && Date.now() < deadline) await sleep(100);
    expect(server.redis?.isReady()).toBe(true);
    expect(log.lines.some((line) => line.msg === 'shared store (Redis) answers again')).toBe(true);
  });
});

describe('a process that holds up its own event loop', () => {
  /** Five commands sent, then the loop held for 200 ms in the same turn (the check phase). */
  const heldBurst = () =>
    new Promise<Promise<string>[]>((resolve) =>
      setImmediate(() => {
        const answers = Array.from({ length: 5 }, (_, n) =>
          server.redis!.client.get(`loop-held-${n}`).then(
            () => 'answered',
            (error: Error) => error.message,
          ),
        );
        const until = performance.now() + 200;
        while (performance.now() < until);
        resolve(answers);
      }),
    );

  it('does not take the timeouts that follow for a Redis that hangs', async () => {
    const trips = server.redis!.circuitTrips();
    for (let burst = 0; burst < 2; burst++) {
      // Redis answers at once, but the answers wait unread while the loop is held; the commands'
      // 150 ms timers fire first (the next turn runs timers before it polls for I/O).
      expect(await Promise.all(await heldBurst())).toContain('Command timed out');
    }
    // Before: three such timeouts in a row opened the circuit and Redis was skipped for 2 s.
    expect(server.redis!.circuitTrips()).toBe(trips);
    expect(server.redis!.isReady()).toBe(true);
  });
});
