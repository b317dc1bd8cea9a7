import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_JWT_SECRET, bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { ALICE, ORDERS, call } from './helpers';

/**
 * `npm run token -- --sub cus_alice`, as a user would run it (a child process), yields a token
 * the server started with the same environment accepts — with JWT_SECRET, and without it, where
 * both sides use the development secret generated into DATA_DIR.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

/** The environment of the child: this process's, minus every setting the token script reads. */
function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(JWT_|DATA_DIR$|NODE_ENV$|PUBLIC_BASE_URL$)/.test(name)) delete env[name];
  }
  return { ...env, NODE_ENV: 'test', ...settings };
}

async function mintWithScript(settings: Record<string, string>, args = ['--sub', ALICE]): Promise<string> {
  const { stdout } = await run(TSX, ['scripts/token.ts', ...args], {
    cwd: ROOT,
    env: childEnv(settings),
    timeout: 60_000,
  });
  return stdout.trim();
}

const ALICE_ORDER = ORDERS[1] as string;
const BOB_ORDER = ORDERS[3] as string;

describe('with JWT_SECRET', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  it("prints one JWT that opens alice's order, and only hers", async () => {
    const token = await mintWithScript({ JWT_SECRET: TEST_JWT_SECRET });
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const own = await call(server, `/api/v1/orders/${ALICE_ORDER}`, { headers: bearer(token) });
    expect(own.status).toBe(200);
    expect(own.body.id).toBe(1);
    const other = await call(server, `/api/v1/orders/${BOB_ORDER}`, { headers: bearer(token) });
    expect(other.status).toBe(403);
  });

  it('passes --scope through: orders:read:all opens any order', async () => {
    const token = await mintWithScript({ JWT_SECRET: TEST_JWT_SECRET }, [
      '--sub',
      'cus_support',
      '--scope',
      'orders:read:all',
    ]);
    expect((await call(server, `/api/v1/orders/${BOB_ORDER}`, { headers: bearer(token) })).status).toBe(200);
  });

  it('refuses a scope the server does not know, naming the ones it does', async () => {
    const failure = await mintWithScript({ JWT_SECRET: TEST_JWT_SECRET }, [
      '--sub',
      ALICE,
      '--scope',
      'orders:write',
    ]).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain('Unknown scope orders:write');
    expect(failure?.stderr).toContain('orders:read:all');
  });

  it('a token minted with another secret is refused (401)', async () => {
    const token = await mintWithScript({ JWT_SECRET: 'a-completely-different-secret-of-32-chars-or-more' });
    expect((await call(server, `/api/v1/orders/${ALICE_ORDER}`, { headers: bearer(token) })).status).toBe(
      401,
    );
  });
});

describe('with JWT_ISSUER and JWT_AUDIENCE', () => {
  const settings = { JWT_ISSUER: 'https://issuer.test', JWT_AUDIENCE: 'storefront' };
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: settings });
  });
  afterAll(() => server.stop());

  it('the script sets the configured issuer and audience, so the server accepts its token', async () => {
    const token = await mintWithScript({ JWT_SECRET: TEST_JWT_SECRET, ...settings });
    expect((await call(server, `/api/v1/orders/${ALICE_ORDER}`, { headers: bearer(token) })).status).toBe(
      200,
    );
  });
});

describe('without JWT_SECRET: script first, then a server on the same DATA_DIR', () => {
  let dataDir: string;
  let firstToken: string;
  let server: TestServer;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-token-'));
    firstToken = await mintWithScript({ DATA_DIR: dataDir });
    server = await startTestServer({ env: { DATA_DIR: dataDir, JWT_SECRET: '' } });
  });
  afterAll(async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const aliceOrder = (token: string) =>
    call(server, `/api/v1/orders/${ALICE_ORDER}`, { headers: bearer(token) });

  it('the script generated a development secret into the data folder', async () => {
    const secret = (await readFile(path.join(dataDir, 'jwt-secret'), 'utf8')).trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(secret).not.toBe(TEST_JWT_SECRET);
  });

  it("the server uses that secret: the script's token opens alice's order", async () => {
    const reply = await aliceOrder(firstToken);
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(1);
  });

  it('a second run reuses the same secret, so its token is accepted too', async () => {
    expect((await aliceOrder(await mintWithScript({ DATA_DIR: dataDir }))).status).toBe(200);
  });

  it('the server does not accept the test secret instead (401)', async () => {
    expect((await aliceOrder(await mintToken({ sub: ALICE }))).status).toBe(401);
  });

  it('a token from another data folder is refused (401)', async () => {
    const otherDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-token-'));
    try {
      expect((await aliceOrder(await mintWithScript({ DATA_DIR: otherDir }))).status).toBe(401);
    } finally {
      await rm(otherDir, { recursive: true, force: true });
    }
  });
});

describe('server first, then the script', () => {
  let dataDir: string;
  let server: TestServer;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-token-'));
    server = await startTestServer({ env: { DATA_DIR: dataDir, JWT_SECRET: '' } });
  });
  afterAll(async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('the script reads the secret the server generated', async () => {
    const token = await mintWithScript({ DATA_DIR: dataDir });
    expect((await call(server, `/api/v1/orders/${ALICE_ORDER}`, { headers: bearer(token) })).status).toBe(
      200,
    );
  });
});
