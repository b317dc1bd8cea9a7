import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The production defaults at the HTTP edge (issue 28, rows 12 and 13): every answer is ours (JSON
 * with the right status, also where node:http answers before the app), and with introspection
 * off no error message hints at the schema.
 */

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({
    env: { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://shop.example.com' },
  });
});
afterAll(() => server.stop());

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** One request sent as raw bytes (fetch would mend most of these); the socket closes after it. */
function rawRequest(head: string, body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [headers = '', ...rest] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
      resolve({ status, headers, body: rest.join('\r\n\r\n') });
    });
    socket.setTimeout(5_000, () => socket.destroy());
    socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`);
  });
}

function expectOurJson(answer: RawAnswer, status: number, message: RegExp | string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers).toMatch(/content-type: application\/json; charset=utf-8/i);
  expect(JSON.parse(answer.body)).toEqual({
    message: typeof message === 'string' ? message : expect.stringMatching(message),
  });
}

describe('protocol hygiene (row 13)', () => {
  it('answers two Host headers with our 400 (RFC 9112 §3.2)', async () => {
    const answer = await rawRequest(
      'GET /api/v1/products?per_page=1 HTTP/1.1\r\nHost: shop.example.com\r\nHost: evil.example',
    );
    expectOurJson(answer, 400, 'The Host header is invalid.');
  });

  it('answers an HTTP/1.1 request without Host with our 400', async () => {
    expectOurJson(await rawRequest('GET /api/v1/products HTTP/1.1'), 400, 'The Host header is missing.');
  });

  it('still serves HTTP/1.0 without Host', async () => {
    const answer = await rawRequest('GET /healthz HTTP/1.0');
    expect(answer.headers).toMatch(/^HTTP\/1\.[01] 200/);
  });

  it('answers an unknown Expect with our 417', async () => {
    const answer = await rawRequest(
      'GET /api/v1/products HTTP/1.1\r\nHost: shop.example.com\r\nExpect: teapot',
    );
    expectOurJson(answer, 417, /Expect/);
  });

  it('still honours Expect: 100-continue', async () => {
    const body = '{"query":"{ __typename }"}';
    const answer = await rawRequest(
      'POST /graphql HTTP/1.1\r\nHost: shop.example.com\r\nContent-Type: application/json\r\n' +
        `Expect: 100-continue\r\nContent-Length: ${body.length}`,
      body,
    );
    expect(answer.headers).toMatch(/^HTTP\/1\.1 100 Continue/);
  });

  it.each(['//api/v1/products', '/api/v1%2Fproducts', '/metrics/', '/nowhere', '/graphql/x'])(
    '%s is our JSON 404',
    async (target) => {
      const answer = await rawRequest(`GET ${target} HTTP/1.1\r\nHost: shop.example.com`);
      expectOurJson(answer, 404, 'Not Found.');
    },
  );
});

const SCHEMA_HINT = /Did you mean|Suggestion|COMPLETED|inline fragment|"Order"|"products"|OrderFilter"/;

describe('no schema hints with introspection off (row 12)', () => {
  const ENUM_VARIABLE =
    'query A($s: [PaymentStatus!]) { orders(filter: { paymentStatus: $s }) { totalCount } }';
  it.each([
    ['an enum value', { query: '{ orders(filter: { paymentStatus: [COMPLETE] }) { totalCount } }' }],
    ['a field of a possible type', { query: '{ node(id: "x") { ulid } }' }],
    ['a field', { query: '{ prodcts { totalCount } }' }],
    ['an argument', { query: '{ products(frist: 1) { totalCount } }' }],
    ['a type', { query: 'query ($f: OrderFiltr) { __typename }' }],
    ['an enum value in variables', { query: ENUM_VARIABLE, variables: { s: ['COMPLETE'] } }],
    [
      'an input field in variables',
      {
        query: 'query ($f: OrderFilter) { orders(filter: $f) { totalCount } }',
        variables: { f: { paymentStatu: ['x'] } },
      },
    ],
    [
      // A document of two operations runs on graphql-js, not graphql-jit.
      'an enum value in variables, executed by graphql-js',
      {
        query: `${ENUM_VARIABLE} query B { __typename }`,
        operationName: 'A',
        variables: { s: ['COMPLETE'] },
      },
    ],
  ])('says nothing of the schema for a misspelt %s', async (_name, body) => {
    const response = await server.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const { errors = [] } = (await response.json()) as { errors?: { message: string }[] };
    expect(errors.length).toBeGreaterThan(0);
    for (const { message } of errors) expect(message).not.toMatch(SCHEMA_HINT);
  });
});
