import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useHealth } from '../../src/http/use-health';
import { schema } from '../../src/schema/index';

/** /readyz in-process (yoga.fetch), with a database ping the test controls. */
function yogaWith(options: Parameters<typeof useHealth>[0]) {
  return createYoga({ schema, plugins: [useHealth(options)] });
}

describe('/readyz', () => {
  it('answers 503 when a drain begins while the database ping is in flight', async () => {
    let draining = false;
    const yoga = yogaWith({
      pingDatabase: async () => {
        draining = true; // SIGTERM arrives mid-ping
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
      isDraining: () => draining,
    });
    const response = await yoga.fetch('http://localhost/readyz');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'unavailable', reason: 'shutting down' });
  });

  it('answers 200 with the shared store reported, and 503 when the ping times out', async () => {
    const ready = yogaWith({ pingDatabase: async () => undefined, pingSharedStore: async () => false });
    const response = await ready.fetch('http://localhost/readyz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', redis: 'degraded' });

    const hung = yogaWith({ pingDatabase: () => new Promise(() => undefined), readinessTimeoutMs: 50 });
    const timedOut = await hung.fetch('http://localhost/readyz');
    expect(timedOut.status).toBe(503);
    expect(await timedOut.json()).toEqual({ status: 'unavailable', reason: 'database' });
  });
});
