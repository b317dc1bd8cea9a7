import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadFixtures, loadGenerated } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startDelayingProxy } from '../support/delaying-proxy';
import { listeningUrl, serverProcessEnv, spawnServer } from '../support/processes';
import { bearer, mintToken, startTestServer } from '../support/server';

describe('graceful shutdown', () => {
  it('finishes in-flight requests, refuses new ones, then closes the database', async () => {
    const server = await startTestServer({ fixtures: false });
    // Enough products that a regex search over all of them takes a while on FerretDB.
    await loadGenerated(server.testDb.db, { seed: 3, products: 1_000, orders: 0 });
    let received = 0;
    server.http.on('request', () => received++);
    const inFlight = Array.from({ length: 4 }, (_, index) =>
      fetch(`${server.url}/api/v1/products?search=zz${index}&per_page=100`).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as { meta: { total: number } },
      })),
    );
    while (received < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = performance.now();
    const closing = server.close(30_000);
    const results = await Promise.all(inFlight);
    expect(results.map((result) => result.status)).toEqual(Array(4).fill(200));
    console.log(`in-flight requests drained ${Math.round(performance.now() - started)} ms after close began`);
    await closing;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    // The driver is closed: the client refuses new work.
    await expect(server.database.db.command({ ping: 1 })).rejects.toThrow();
    await server.testDb.close();
  }, 60_000);

  it('says not ready at once, and answers requests caught by the deadline 503, never a reset', async () => {
    // Every database reply held for 10 s once the server is up: the requests below are still
    // waiting for the database when the 50 ms deadline passes, however fast the engine is.
    const proxy = await startDelayingProxy(inject('mongoUri'));
    const server = await startTestServer({ fixtures: false, env: { MONGODB_URI: proxy.uri } });
    proxy.delayMs = 10_000;
    let received = 0;
    server.http.on('request', () => received++);
    const slow = (index: number) =>
      fetch(`${server.url}/api/v1/products?search=zz${index}&per_page=100`).then(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        connection: response.headers.get('connection'),
        body: await response.json(),
      }));
    const graphqlSlow = fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ productPage(search: "zzq", perPage: 100) { total } }' }),
    }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const inFlight = [0, 1, 2].map(slow);
    while (received < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = server.close(50);
    const ready = await server.app.fetch('http://localhost/readyz');
    expect(ready.status).toBe(503);
    for (const result of await Promise.all(inFlight)) {
      expect(result).toEqual({
        status: 503,
        retryAfter: '5',
        connection: 'close',
        body: { message: 'Service Unavailable.' },
      });
    }
    expect(await graphqlSlow).toEqual({
      status: 503,
      body: { errors: [{ message: 'Service Unavailable.', extensions: { code: 'SERVICE_UNAVAILABLE' } }] },
    });
    await closing;
    await server.testDb.close();
    await proxy.close();
  }, 60_000);
});

describe('idle keep-alive connections', () => {
  it('are closed once nothing is in flight, well before the deadline', async () => {
    const server = await startTestServer({ fixtures: false });
    // fetch keeps this connection open in its pool, idle.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const started = performance.now();
    await server.close(10_000);
    expect(performance.now() - started).toBeLessThan(2_000);
    await server.testDb.close();
  });
});

describe('SIGTERM under keep-alive load', () => {
  // A load test on two shared cores: retried, so one starved moment of the machine does not decide
  // it; a drain that cuts or fails requests fails every try.
  it(
    'lets every connection finish its request with Connection: close: no 5xx, no request cut, exit 0',
    { retry: 2, timeout: 60_000 },
    async () => {
      const testDb = await openTestDatabase('drain');
      await loadFixtures(testDb.db);
      const child = spawnServer(
        serverProcessEnv(testDb, {
          RESPONSE_CACHE_TTL_MS: '0',
          SHUTDOWN_DEADLINE_MS: '10000',
          // What is tested is the drain, not overload: the load must not queue past the admission
          // bound, nor a call past the database deadline while the suite's other files load the
          // machine (in CI one request of 135 outlasted a 5 s deadline, in all three attempts).
          MONGODB_MAX_QUEUED_QUERIES: '1000',
          MONGODB_TIMEOUT_MS: '8000',
        }),
      );
      let logs = '';
      child.stdout.on('data', (chunk: Buffer) => (logs += chunk.toString()));
      const url = await listeningUrl(child);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

      const statuses = new Map<number, number>();
      const errors = new Map<string, number>();
      let sigtermAt = 0;
      let answeredAfterSigterm = 0;
      let finish: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      // Stopped once the server has exited (below): a load that ended by its clock first would drop
      // the answers still on their way, and count them cut.
      const load = autocannon(
        { url: `${url}/api/v1/products?per_page=20`, connections: 50, duration: 30 },
        () => finish(),
      );
      load.on('response', (_client: unknown, status: number) => {
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (sigtermAt) answeredAfterSigterm++;
      });
      load.on('reqError', (error: NodeJS.ErrnoException) => {
        const code = error.code ?? error.message;
        errors.set(code, (errors.get(code) ?? 0) + 1);
      });
      // Under way on every connection (bounded: 3 s).
      const loaded = performance.now();
      while ((statuses.get(200) ?? 0) < 100 && performance.now() - loaded < 3_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      sigtermAt = performance.now();
      child.kill('SIGTERM');
      const code = await exited;
      const exitMs = performance.now() - sigtermAt;
      load.stop();
      await done;
      await testDb.close();

      // Every request the server took (one request-log line each) reached the client answered.
      const served = logs.split('\n').filter((line) => line.includes('"path":"/api/v1/products"')).length;
      const received = [...statuses.values()].reduce((sum, count) => sum + count, 0);
      expect(received).toBe(served);
      expect(code).toBe(0);
      expect(exitMs).toBeLessThan(10_000);
      expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
      expect(statuses.get(200)).toBeGreaterThanOrEqual(50);
      // The listener is gone after SIGTERM, so reconnecting is refused; a reconnection the kernel
      // had queued for the listener when it closed is reset (7-13 of 50 in 3 of 7 runs here, also
      // on 9c00bf1). Neither carried a request: `received === served` above says none was cut.
      expect([...errors.keys()].filter((name) => name !== 'ECONNREFUSED' && name !== 'ECONNRESET')).toEqual(
        [],
      );
      expect(errors.get('ECONNRESET') ?? 0).toBeLessThanOrEqual(50);
      // One last answer per connection (it carried Connection: close), plus at most one more on each
      // for the moments between kill() here and the signal handler there: before the drain, busy
      // keep-alive connections kept being served until the deadline (400-480 answers).
      expect(answeredAfterSigterm).toBeLessThanOrEqual(2 * 50);
      expect(logs).not.toMatch(/"level":50/);
      console.log(
        `SIGTERM under load: exit ${code} after ${Math.round(exitMs)} ms, ${answeredAfterSigterm} answers after SIGTERM, ` +
          `statuses ${JSON.stringify(Object.fromEntries(statuses))}, errors ${JSON.stringify(Object.fromEntries(errors))}`,
      );
    },
  );
});

describe('scaling out', () => {
  let testDb: TestDatabase;
  const children: ChildProcessWithoutNullStreams[] = [];

  beforeAll(async () => {
    testDb = await openTestDatabase('scale');
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await testDb.close();
  });

  function startProcess(): Promise<string> {
    const child = spawnServer(
      serverProcessEnv(testDb, {
        MONGODB_READ_PREFERENCE: 'primaryPreferred',
        MONGODB_MAX_POOL_SIZE: '5',
        SEED_FIXTURES: 'true',
      }),
    );
    children.push(child);
    return listeningUrl(child);
  }

  it('two server processes on one database serve the same data, seed it once, and need no shared state', async () => {
    const [first, second] = await Promise.all([startProcess(), startProcess()]);
    const token = await mintToken({ sub: 'cus_bob' });
    const bodies = await Promise.all(
      [first, second].flatMap((url) => [
        fetch(`${url}/api/v1/products?per_page=5&page=2`).then((response) => response.text()),
        fetch(`${url}/api/v1/orders/01KHZKA9ZFN7YB2GJ6VH8SE3PC`, { headers: bearer(token) }).then(
          (response) => response.text(),
        ),
      ]),
    );
    expect(bodies[0]).toBe(bodies[2]!.replaceAll(second!, first!));
    expect(bodies[1]).toBe(bodies[3]);
    expect(JSON.parse(bodies[0]!).meta.total).toBe(20);
    // A cursor from one instance works on the other.
    const query = '{ products(first: 3) { pageInfo { endCursor } } }';
    const post = (url: string, body: string) =>
      fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
        (response) => response.json() as Promise<{ data: { products: { pageInfo: { endCursor: string } } } }>,
      );
    const cursor = (await post(first!, JSON.stringify({ query }))).data.products.pageInfo.endCursor;
    const next = await post(
      second!,
      JSON.stringify({
        query: `{ products(first: 2, after: "${cursor}") { edges { node { databaseId } } } }`,
      }),
    );
    expect(next).toEqual({
      data: { products: { edges: [{ node: { databaseId: 4 } }, { node: { databaseId: 5 } }] } },
    });
  }, 60_000);
});
