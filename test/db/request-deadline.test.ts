import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLane } from '../../src/db/guards/admission';
import { DatabaseTimeoutError, guardRepository } from '../../src/db/guards/deadline';
import { connectDatabase, type Database } from '../../src/db/mongo';
import { createProductRepository } from '../../src/db/catalog/product-repository';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startDelayingProxy, type DelayingProxy } from '../support/delaying-proxy';

/**
 * One request's database calls share one deadline (issue 28 row 11): calls in a row, or a queue
 * wait and a call, each within MONGODB_TIMEOUT_MS, added up past it (5.43 s on a hung PostgreSQL
 * with the 3 s default). The real repository on the real database, its replies held by a proxy.
 */
const TIMEOUT_MS = 1_000;
const GRACE_MS = 500;

let testDb: TestDatabase;
let proxy: DelayingProxy;
let viaProxy: Database;

beforeAll(async () => {
  testDb = await openTestDatabase('request-deadline');
  await loadFixtures(testDb.db);
  proxy = await startDelayingProxy(testDb.uri);
  viaProxy = await connectDatabase({ uri: proxy.uri, dbName: testDb.dbName });
});

afterAll(async () => {
  await viaProxy?.close();
  await proxy?.close();
  await testDb?.close();
});

describe('a request’s database deadline', () => {
  it('ends calls in a row at MONGODB_TIMEOUT_MS + a grace from the first, not one timeout each', async () => {
    const lane = createLane('scan', {
      concurrency: 4,
      queue: 10,
      maxWaitMs: 10_000,
      giveUpMs: 10_000,
      slowMs: 10_000,
    });
    const bind = guardRepository('products', createProductRepository(viaProxy.db), {
      timeoutMs: TIMEOUT_MS,
      graceMs: GRACE_MS,
      laneOf: () => lane,
    });
    // Connections opened and the plan warm, on another request.
    expect(await bind(new AbortController().signal).findByIds([1])).toHaveLength(1);
    const products = bind(new AbortController().signal);
    // Each reply now takes 0.6 s: every call alone is well within the 1 s timeout.
    proxy.delayMs = 600;
    const started = performance.now();
    let failure: unknown;
    try {
      for (let call = 0; call < 4; call++) await products.findByIds([call + 1]);
    } catch (error) {
      failure = error;
    } finally {
      proxy.delayMs = 0;
    }
    const elapsed = performance.now() - started;
    // Before: four calls of 0.6 s each, 2.4 s for one request, with no error.
    expect(failure).toBeInstanceOf(DatabaseTimeoutError);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + GRACE_MS + 300);
    expect(elapsed).toBeGreaterThan(TIMEOUT_MS + GRACE_MS - 300);
    // Another request has its own deadline.
    expect(await bind(new AbortController().signal).findByIds([2])).toHaveLength(1);
  });
});
