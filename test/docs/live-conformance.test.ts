import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertConformsToOpenApi } from '../support/openapi-conformance';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/** Real responses of the real server, checked against the OpenAPI document it serves. */

let server: TestServer;
beforeAll(async () => {
  // The fuzzer's 1–2-letter searches come faster than the share their lane may keep the database
  // busy (test/ops/word-scan-lane.test.ts): its 503s are admission, not what this checks.
  server = await startTestServer({ env: { MONGODB_WORD_SCAN_BUSY_PERCENT: '100' } });
});
afterAll(() => server.stop());

const ORDER = '/api/v1/orders/{order}';
const LIST = '/api/v1/products';
const SEARCH = '/api/v1/products/search';

describe('responses conform to /api/v1/openapi.json', () => {
  it.each([
    [LIST, '/api/v1/products', 200],
    [LIST, '/api/v1/products?page=3', 200],
    [LIST, '/api/v1/products?search=gift&category=gift%20cards&per_page=2', 200],
    [LIST, '/api/v1/products?search=nothing-matches-this', 200],
    [LIST, '/api/v1/products?page=0&per_page=101', 422],
    [SEARCH, '/api/v1/products/search?term=soundwave', 200],
    [SEARCH, '/api/v1/products/search', 422],
    [SEARCH, `/api/v1/products/search?term=${'x'.repeat(201)}`, 422],
  ])('%s  GET %s → %i', async (template, path, status) => {
    const response = await server.request(path);
    expect(response.status).toBe(status);
    assertConformsToOpenApi('get', template, status, response.headers, await response.json());
  });

  it.each([
    ['cus_bob', '01KHZKA9ZFN7YB2GJ6VH8SE3PC', 200],
    ['cus_alice', '01KHZKA9ZFN7YB2GJ6VH8SE3PC', 403],
    ['cus_alice', '01KHZKA9ZFN7YB2GJ6VH8SE3PZ', 404],
    [null, '01KHZKA9ZFN7YB2GJ6VH8SE3PC', 401],
  ])('order as %s: %s → %i', async (sub, ulid, status) => {
    const headers = sub ? bearer(await mintToken({ sub })) : {};
    const response = await server.request(`/api/v1/orders/${ulid}`, { headers });
    expect(response.status).toBe(status);
    assertConformsToOpenApi('get', ORDER, status, response.headers, await response.json());
  });
});

describe('schemathesis', () => {
  it('finds no server error and no response that violates the document', async () => {
    const token = await mintToken({ sub: 'fuzzer', scope: 'orders:read:all' });
    const { stdout, stderr } = await promisify(execFile)(
      'bash',
      ['scripts/fuzz.sh', `${server.url}/api/v1/openapi.json`],
      {
        env: {
          ...process.env,
          FUZZ_TOKEN: token,
          FUZZ_MAX_EXAMPLES: '40',
          FUZZ_TIMEOUT: '400',
          FUZZ_SEED: '1',
        },
        maxBuffer: 32 * 1024 * 1024,
        timeout: 600_000,
      },
    ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`schemathesis failed:\n${error.stdout ?? ''}\n${error.stderr ?? error.message}`);
    });
    const summary = /fuzz: (\d+) test cases sent, (\d+) failed checks/.exec(`${stdout}\n${stderr}`);
    expect(summary, stdout + stderr).not.toBeNull();
    console.log(summary?.[0]);
    expect(Number(summary?.[1])).toBeGreaterThan(100);
    expect(Number(summary?.[2])).toBe(0);
  }, 660_000);
});
