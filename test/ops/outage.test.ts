import { afterAll, describe, expect, it } from 'vitest';
import { startServerOnOwnDatabase, type OwnDatabaseServer } from '../support/own-database';

/** The database goes away in the middle of the test and comes back on the same address. */

let own: OwnDatabaseServer | undefined;

afterAll(() => own?.stop());

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}

describe('database outage', () => {
  it('answers 503 quickly on both APIs while the database is down and recovers by itself', async () => {
    own = await startServerOnOwnDatabase('outage', {
      MONGODB_TIMEOUT_MS: '1000',
      RESPONSE_CACHE_TTL_MS: '0',
    });
    const { server, database } = own;
    const rest = () => fetch(`${server.url}/api/v1/products?per_page=1`);
    const graphql = () =>
      fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ productPage(perPage: 1) { total } }' }),
      });
    expect((await rest()).status).toBe(200);

    await database.stop();

    const down = await timed(rest);
    expect(down.value.status).toBe(503);
    expect(down.value.headers.get('retry-after')).toBe('5');
    expect(down.value.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await down.value.json()).toEqual({ message: 'Service Unavailable.' });
    expect(down.ms).toBeLessThan(5_000);

    const gqlDown = await timed(graphql);
    const gqlBody = (await gqlDown.value.json()) as {
      errors: { message: string; extensions: { code: string } }[];
    };
    expect(gqlBody.errors[0]).toMatchObject({
      message: 'Service Unavailable.',
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
    expect(gqlDown.ms).toBeLessThan(5_000);

    const ready = await timed(() => fetch(`${server.url}/readyz`));
    expect(ready.value.status).toBe(503);
    expect(ready.ms).toBeLessThan(2_000);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    await own.restart();
    const restarted = performance.now();
    let recoveredMs = -1;
    while (performance.now() - restarted < 20_000) {
      if ((await rest()).status === 200) {
        recoveredMs = Math.round(performance.now() - restarted);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(recoveredMs).toBeGreaterThanOrEqual(0);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const gqlUp = (await (await graphql()).json()) as { data: { productPage: { total: number } } };
    expect(gqlUp.data.productPage.total).toBe(20);
    console.log(
      `outage timings: REST 503 in ${down.ms} ms, GraphQL error in ${gqlDown.ms} ms, ` +
        `/readyz 503 in ${ready.ms} ms, recovered ${recoveredMs} ms after the database restarted`,
    );
  }, 60_000);
});
