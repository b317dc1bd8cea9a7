import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../support/captured-log';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * Client mistakes answer 400 (or 401) with an error that names the mistake and leaks nothing,
 * and are logged below error level without a stack. Each of these answered 500 (or 200) before.
 */

let server: TestServer;
const { logger, lines: logLines } = capturedLog();

beforeAll(async () => {
  server = await startTestServer({ logger });
});
afterAll(() => server.stop());

interface Reply {
  status: number;
  text: string;
  body: { errors?: { message: string; extensions?: Record<string, unknown> }[]; message?: string };
}

async function reply(response: Response): Promise<Reply> {
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Reply['body'] };
}

const post = async (body: string) =>
  reply(
    await server.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    }),
  );

function expectClientError(result: Reply, code: string) {
  expect(result.status).toBe(400);
  expect(result.body.errors).toHaveLength(1);
  expect(result.body.errors?.[0]?.extensions?.code).toBe(code);
  expect(result.text).not.toMatch(/originalError|SyntaxError|Unexpected|stack|position|\.ts:/);
}

describe('operations and parameters the API cannot serve', () => {
  // Subscriptions exist since live orders (test/graphql/subscriptions.test.ts); mutations do not.
  it.each([['mutation', 'mutation { __typename }']])(
    'refuses a %s (the schema has no such root type) with 400',
    async (operation, query) => {
      const result = await post(JSON.stringify({ query }));
      expectClientError(result, 'GRAPHQL_VALIDATION_FAILED');
      expect(result.body.errors?.[0]?.message).toBe(`This API has no ${operation} operations.`);
    },
  );

  it.each([
    ['variables', 'variables=%7Bnot-json'],
    ['extensions', 'extensions=%7Bnot-json'],
  ])('refuses malformed GET %s with 400', async (_name, parameter) => {
    const result = await reply(
      await server.request(`/graphql?query=%7B__typename%7D&${parameter}`, {
        headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
      }),
    );
    expectClientError(result, 'BAD_REQUEST');
    expect(result.body.errors?.[0]?.message).toMatch(/"variables" and "extensions"/);
  });

  it('refuses an invalid JSON body with 400 and without the parser text', async () => {
    const result = await post('{"query":');
    expectClientError(result, 'BAD_REQUEST');
    expect(result.body.errors?.[0]?.extensions).toEqual({ code: 'BAD_REQUEST' });
  });

  it('logs none of them at error level, nor with a stack', () => {
    const errors = logLines.filter((line) => (line.level as number) >= 50);
    expect(errors).toEqual([]);
    expect(JSON.stringify(logLines)).not.toMatch(/"stack"/);
    expect(logLines.some((line) => line.msg === 'client error')).toBe(true);
  });

  it('still serves a well-formed GET', async () => {
    const response = await server.request('/graphql?query=%7B__typename%7D&variables=%7B%7D', {
      headers: { 'x-graphql-yoga-csrf': '1' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('aliases', () => {
  it('counts aliases of __typename toward the alias limit', async () => {
    const aliases = Array.from({ length: 500 }, (_, index) => `a${index}: __typename`).join(' ');
    const result = await post(JSON.stringify({ query: `{ ${aliases} }` }));
    expect(result.body.errors?.[0]?.message).toMatch(/Aliases limit of 20 exceeded, found 500/);
    expect(result.text).not.toContain('"a499"');
  });
});

/** fetch() joins repeated headers into one; node:http can send them as separate lines. */
function getWithAuthorizations(path: string, values: string[], body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.url}${path}`, { method: body ? 'POST' : 'GET' }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text, body: JSON.parse(text) as Reply['body'] }),
      );
    });
    request.on('error', reject);
    request.setHeader('authorization', values);
    if (body) request.setHeader('content-type', 'application/json');
    request.end(body);
  });
}

describe('two Authorization headers', () => {
  it('answer 401 on /api/v1, whichever comes first', async () => {
    const alice = (await mintToken({ sub: 'cus_alice' })) as string;
    const order = '/api/v1/orders/01KE78KGFSQ4ZC7N2XW8RTB3MD';
    expect((await getWithAuthorizations(order, [bearer(alice).authorization])).status).toBe(200);
    const result = await getWithAuthorizations(order, [bearer(alice).authorization, 'Bearer x.y.z']);
    expect(result.status).toBe(401);
    expect(result.body).toEqual({ message: 'Unauthenticated.' });
    expect((await getWithAuthorizations('/api/v1/products', ['Bearer a.b.c', 'Bearer d.e.f'])).status).toBe(
      401,
    );
  });

  it('answer 401 on /graphql', async () => {
    const result = await getWithAuthorizations(
      '/graphql',
      ['Bearer a.b.c', 'Bearer d.e.f'],
      JSON.stringify({ query: '{ __typename }' }),
    );
    expect(result.status).toBe(401);
    expect(result.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
