import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWKS_LIMITS, remoteKeySet } from '../../src/auth/jwks';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The identity provider's key URL as an attacker (or an outage) makes it: one that never answers,
 * one that answers megabytes of garbage, one that streams 100 MB of JSON. Before: a product page
 * carrying any token waited 3.6 s (the rate limits verified it to count the client), garbage was
 * fetched again at once after each failure (396 fetches in 8 s) and 100 MB were read whole.
 */
type Mode = 'hang' | 'garbage' | 'huge';
let mode: Mode = 'hang';
let fetches = 0;
let bytesSent = 0;
let jwks: Server;
let server: TestServer;
const held: ServerResponse[] = [];

function answer(response: ServerResponse): void {
  fetches += 1;
  if (mode === 'hang') {
    held.push(response);
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, mode === 'garbage' ? 0x7a : 0x20);
  const total = mode === 'garbage' ? 5 * 1024 * 1024 : 100 * 1024 * 1024;
  let sent = 0;
  if (mode === 'huge') response.write('{"keys":[], "padding": "');
  const more = () => {
    while (sent < total && !response.destroyed) {
      sent += chunk.length;
      bytesSent += chunk.length;
      if (!response.write(chunk)) return void response.once('drain', more);
    }
    response.end(mode === 'huge' ? '"}' : '');
  };
  response.on('close', () => (sent = total));
  more();
}

beforeAll(async () => {
  jwks = createServer((_request, response) => answer(response));
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const { port } = jwks.address() as AddressInfo;
  server = await startTestServer({
    env: {
      JWT_SECRET: '',
      JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`,
      // The production default: every request is counted per client.
      RATE_LIMIT_REQUESTS_PER_MINUTE: '600',
    },
  });
});

afterAll(async () => {
  for (const response of held) response.destroy();
  jwks?.closeAllConnections();
  await new Promise((resolve) => jwks?.close(resolve));
  await server?.stop();
});

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** Well formed and signed with a key the provider would have to supply. */
const token = (kid: string) =>
  `${part({ alg: 'RS256', typ: 'JWT', kid })}.${part({ sub: 'customer-1', exp: Math.floor(Date.now() / 1000) + 600 })}.${'A'.repeat(342)}`;
const withToken = (kid: string) => ({ headers: { authorization: `Bearer ${token(kid)}` } });

async function timed(path: string, init: RequestInit): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await server.request(path, init);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

describe('a JWKS URL that misbehaves', () => {
  it('never holds up a public page carrying a token', async () => {
    mode = 'hang';
    const page = await timed('/api/v1/products?per_page=1', withToken('k-public'));
    expect(page.status).toBe(200);
    expect(page.ms).toBeLessThan(1_500);
    const graphql = await timed('/graphql', {
      method: 'POST',
      headers: { ...withToken('k-public').headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ productPage(perPage: 1) { total } }' }),
    });
    expect(graphql.status).toBe(200);
    expect(graphql.ms).toBeLessThan(1_500);
  });

  it('is asked once per cool-down, not once per request, and the wait is bounded', async () => {
    // The hanging fetch (if one started) ends by its timeout; then garbage answers for a while.
    const order = await timed('/api/v1/orders/01ARZ3NDEKTSV4RRFFQ69G5FAV', withToken('k-order'));
    expect(order.status).toBe(401);
    expect(order.ms).toBeLessThan(3_500);
    mode = 'garbage';
    const before = fetches;
    for (let index = 0; index < 20; index++) {
      const reply = await timed('/api/v1/orders/01ARZ3NDEKTSV4RRFFQ69G5FAV', withToken(`k-${index}`));
      expect(reply.status).toBe(401);
      expect(reply.ms).toBeLessThan(1_000);
    }
    expect(fetches - before).toBeLessThanOrEqual(1);
  });
});

describe('the key set fetch', () => {
  const url = () => new URL(`http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`);
  const header = { alg: 'RS256', kid: 'k1' };
  const flat = { payload: '', signature: '' } as never;

  it('stops reading a document past its size cap (100 MB of JSON)', async () => {
    mode = 'huge';
    bytesSent = 0;
    const failures: string[] = [];
    const keys = remoteKeySet(url(), { ...JWKS_LIMITS, cooldownMs: 0 }, (error) =>
      failures.push(error.message),
    );
    const rssBefore = process.memoryUsage().rss;
    await expect(keys.getKey(header, flat)).rejects.toThrow();
    expect(failures[0]).toMatch(/over 262144 bytes/);
    // What the provider got to send before the socket closed: the cap plus buffers, not 100 MB.
    expect(bytesSent).toBeLessThan(8 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it('gives up on a provider that does not answer within its timeout', async () => {
    mode = 'hang';
    const failures: string[] = [];
    const keys = remoteKeySet(url(), { ...JWKS_LIMITS, timeoutMs: 300 }, (error) =>
      failures.push(error.name),
    );
    const started = performance.now();
    await expect(keys.getKey(header, flat)).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(failures).toEqual(['TimeoutError']);
  });
});
