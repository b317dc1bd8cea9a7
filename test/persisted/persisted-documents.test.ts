import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ManifestError } from '../../src/persisted/manifest';
import { listProducts } from '../../src/rest/endpoints';
import { startFailureHint } from '../../src/start-failure';
import { describeWithRedis } from '../support/describe-with-redis';
import { sharedStoreIs } from '../support/processes';
import { startRedis, type TestRedis } from '../support/redis';
import { startTestServer, type TestServer } from '../support/server';

const run = promisify(execFile);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const FIRST_PRODUCTS =
  'query FirstProducts {\n  products(first: 2) {\n    edges {\n      node {\n        id\n        name\n      }\n    }\n  }\n}\n';

interface Reply {
  status: number;
  body: { data?: Record<string, unknown>; errors?: { message: string; extensions?: { code?: string } }[] };
}

async function post(server: TestServer, payload: Record<string, unknown>): Promise<Reply> {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(payload),
  });
  return { status: response.status, body: (await response.json()) as Reply['body'] };
}

const byHash = (hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });

async function persist(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [
      '--import',
      'tsx',
      'scripts/persist.ts',
      ...args,
    ]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('npm run persist', () => {
  let folder: string;

  beforeAll(() => {
    folder = mkdtempSync(path.join(tmpdir(), 'persist-'));
  });

  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  it('writes sha256 → document for valid documents and refuses a folder holding an invalid one', async () => {
    writeFileSync(path.join(folder, 'first-products.graphql'), FIRST_PRODUCTS);
    const out = path.join(folder, 'manifest.json');
    const written = await persist(folder, '--out', out);
    expect(written.code).toBe(0);
    expect(written.stdout).toContain('Wrote 1 trusted documents');
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ [sha256(FIRST_PRODUCTS)]: FIRST_PRODUCTS });

    writeFileSync(path.join(folder, 'broken.graphql'), 'query Broken { nope }\n');
    const refusedOut = path.join(folder, 'refused.json');
    const refused = await persist(folder, '--out', refusedOut);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('broken.graphql:1:16: Cannot query field "nope" on type "Query"');
    expect(existsSync(refusedOut)).toBe(false);

    const usage = await persist();
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage: npm run persist -- <folder of .graphql files>');
  }, 30_000);
});

describeWithRedis('automatic persisted queries shared by two instances', () => {
  let redis: TestRedis;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    redis = await startRedis();
    const env = { REDIS_URL: redis.url, PERSISTED_OPERATIONS: 'apq' };
    [a, b] = await Promise.all([startTestServer({ env }), startTestServer({ env })]);
    expect(await sharedStoreIs(true, [a, b])).toBe(true);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  it('runs on B, by hash alone, a document registered on A', async () => {
    const hash = sha256(FIRST_PRODUCTS);
    const unknown = await post(b, byHash(hash));
    expect(unknown.status).toBe(200);
    expect(unknown.body.errors?.[0]).toMatchObject({
      message: 'PersistedQueryNotFound',
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
    });

    const registered = await post(a, { query: FIRST_PRODUCTS, ...byHash(hash) });
    expect(registered.body.errors).toBeUndefined();
    const onB = await post(b, byHash(hash));
    expect(onB.status).toBe(200);
    expect(onB.body).toEqual(registered.body);
  });

  it('refuses a hash that is not the document’s, and still runs ordinary documents', async () => {
    const mismatch = await post(a, { query: FIRST_PRODUCTS, ...byHash('0'.repeat(64)) });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors?.[0]?.message).toBe('provided sha does not match query');
    expect((await post(b, byHash('0'.repeat(64)))).body.errors?.[0]?.message).toBe('PersistedQueryNotFound');
    expect((await post(a, { query: '{ products(first: 1) { totalCount } }' })).body.errors).toBeUndefined();
  });

  it('runs the /api/v1 operations by hash: they are entries of the same store', async () => {
    const reply = await post(b, {
      ...byHash(sha256(listProducts.document)),
      variables: { page: 1, perPage: 1 },
    });
    expect(reply.body.errors).toBeUndefined();
    expect(reply.body.data?.page).toMatchObject({ currentPage: 1, perPage: 1 });
  });
});

describeWithRedis('trusted documents only', () => {
  let redis: TestRedis;
  let server: TestServer;
  let folder: string;

  beforeAll(async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'trusted-'));
    const manifest = path.join(folder, 'manifest.json');
    writeFileSync(manifest, JSON.stringify({ [sha256(FIRST_PRODUCTS)]: FIRST_PRODUCTS }));
    redis = await startRedis();
    server = await startTestServer({
      env: {
        REDIS_URL: redis.url,
        PERSISTED_OPERATIONS: 'trusted-only',
        PERSISTED_OPERATIONS_MANIFEST: manifest,
      },
    });
  });

  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('runs a manifest document by hash and refuses any other document with a clear error', async () => {
    const trusted = await post(server, byHash(sha256(FIRST_PRODUCTS)));
    expect(trusted.status).toBe(200);
    expect(trusted.body.errors).toBeUndefined();
    expect(trusted.body.data?.products).toBeDefined();

    const arbitrary = await post(server, { query: FIRST_PRODUCTS });
    expect(arbitrary.status).toBe(400);
    expect(arbitrary.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    expect(arbitrary.body.errors?.[0]?.message).toMatch(/^Only trusted documents run here/);

    const unknownHash = await post(server, byHash('1'.repeat(64)));
    expect(unknownHash.status).toBe(400);
    expect(unknownHash.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('leaves /api/v1 untouched and serves no GraphiQL', async () => {
    const page = await server.request('/api/v1/products?per_page=1');
    expect(page.status).toBe(200);
    expect(((await page.json()) as { data: unknown[] }).data).toHaveLength(1);
    const graphiql = await server.request('/graphql', { headers: { accept: 'text/html' } });
    expect(graphiql.headers.get('content-type') ?? '').not.toMatch(/text\/html/);
  });

  it('keeps serving the manifest’s documents while Redis is dead', async () => {
    await redis.kill();
    expect(await sharedStoreIs(false, [server])).toBe(true);
    const trusted = await post(server, byHash(sha256(FIRST_PRODUCTS)));
    expect(trusted.status).toBe(200);
    expect(trusted.body.data?.products).toBeDefined();
    expect((await server.request('/api/v1/products?per_page=1')).status).toBe(200);
  });
});

describe('a manifest the server cannot trust', () => {
  it('stops the start with a message naming the variable and the problem', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'bad-manifest-'));
    const manifest = path.join(folder, 'manifest.json');
    writeFileSync(manifest, JSON.stringify({ [sha256('query A { __typename }')]: 'query B { __typename }' }));
    try {
      const env = { PERSISTED_OPERATIONS: 'trusted-only', PERSISTED_OPERATIONS_MANIFEST: manifest };
      const failure = await startTestServer({ fixtures: false, env }).then(
        (server) => server.stop().then(() => undefined),
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ManifestError);
      expect(startFailureHint(failure, loadConfig(env))).toMatch(
        /^PERSISTED_OPERATIONS_MANIFEST: entry "[0-9a-f]{64}" of .*manifest\.json is not the sha256 of its document$/,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
