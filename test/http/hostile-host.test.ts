import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../support/captured-log';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Hostile Host headers and request targets, sent as raw bytes (fetch would refuse to send most of
 * them). None may be a 500 or show a stack; those no URL can be built from are our JSON 400.
 */

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

function rawRequest(port: number, head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [headers = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), headers, body });
    });
    socket.setTimeout(5_000, () => socket.destroy());
    socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  });
}

const get = (target: string, host: string) => `GET ${target} HTTP/1.1\r\nHost: ${host}`;

/** Requests no URL can be built from: each is our 400. */
const MALFORMED = [
  get('/graphql', 'shop.example.com:99999'),
  get('/api/v1/products', '999.999.999.999'),
  get('/graphql', '[:::::]'),
  get('/healthz', '256.1.1.1'),
  get('/', '1.2.3.4.5'),
  get('/', '[::1]:99999'),
  get('/', '[1:2:3:4:5:6:7:8:9]'),
  get('/', 'shop.example.com:65536'),
  get('http://shop.example.com:99999/graphql', 'shop.example.com'),
  get(':99999', 'shop.example.com'),
  get('/', 'a'.repeat(300)),
  get('/', 'shop.example.com/evil'),
  get('/', 'user@shop.example.com'),
];

/** Strange but answerable (or refused by node:http itself): anything but a 5xx or a stack. */
const ODD = [
  get('/graphql', ''),
  get('*', 'shop.example.com'),
  get('//evil.example/path', 'shop.example.com'),
  get('@evil.example', 'shop.example.com'),
  get('http://shop.example.com/api/v1/products?per_page=1', 'other.example'),
  // Before: a 500 (whatwg-node made `http://shop.example.com:8080http://…` of it).
  get('http://shop.example.com/graphql?query={__typename}', 'shop.example.com:8080'),
  'GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example',
  'GET /\u0000 HTTP/1.1\r\nHost: shop.example.com',
  'GET / HTTP/1.1',
  'GET /a b HTTP/1.1\r\nHost: shop.example.com',
];

function expectNoInternals(answer: RawAnswer): void {
  expect(answer.status).toBeGreaterThanOrEqual(200);
  expect(answer.status).toBeLessThan(500);
  expect(answer.body).not.toMatch(/node_modules|\n\s+at |TypeError/);
}

for (const env of ['test', 'production'] as const) {
  describe(`a hostile Host or target (NODE_ENV=${env})`, () => {
    let server: TestServer;
    const log = capturedLog();

    beforeAll(async () => {
      server = await startTestServer({
        logger: log.logger,
        env:
          env === 'production' ? { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://shop.example.com' } : {},
      });
    });
    afterAll(() => server.stop());

    it.each(MALFORMED)('%j is our JSON 400, logged', async (head) => {
      const before = log.lines.length;
      const answer = await rawRequest(server.port, head);
      expectNoInternals(answer);
      expect(answer.status).toBe(400);
      expect(answer.headers).toMatch(/content-type: application\/json; charset=utf-8/i);
      expect(JSON.parse(answer.body)).toEqual({
        message: expect.stringMatching(
          /^The (Host header|request target) is invalid\.|^The request is malformed\.$/,
        ),
      });
      const logged = log.lines.slice(before);
      expect(logged.some((line) => line.status === 400 || line.msg === 'client error')).toBe(true);
    });

    it.each(ODD)('%j is answered without a 5xx or a stack', async (head) => {
      expectNoInternals(await rawRequest(server.port, head));
    });
  });
}

describe('counted', () => {
  it('shows refused requests in the request metrics', async () => {
    const server = await startTestServer();
    try {
      await rawRequest(server.port, get('/graphql', 'shop.example.com:99999'));
      const metrics = await (await server.request('/metrics')).text();
      expect(metrics).toMatch(/http_request_duration_seconds_count\{[^}]*status="400"[^}]*\} [1-9]/);
    } finally {
      await server.stop();
    }
  });
});
