import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGenerated } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { listeningUrl, spawnServer } from '../support/processes';
import { bearer, mintToken, startTestServer, TEST_JWT_SECRET } from '../support/server';

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
    const child = spawnServer({
      ...process.env,
      NODE_ENV: 'test',
      PORT: '0',
      MONGODB_URI: testDb.uri,
      MONGODB_DB: testDb.dbName,
      MONGODB_READ_PREFERENCE: 'primaryPreferred',
      MONGODB_MAX_POOL_SIZE: '5',
      JWT_SECRET: TEST_JWT_SECRET,
      SEED_FIXTURES: 'true',
      LOG_LEVEL: 'info',
    });
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
