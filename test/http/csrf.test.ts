import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/**
 * CSRF prevention on /graphql (issue 12): a request a browser may send cross-site without a
 * preflight (a GET, a form or text/plain POST) must carry a CSRF header; /api/v1 is unchanged.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { CORS_ORIGINS: 'https://shop.example.com' } });
});
afterAll(() => server.stop());

const TYPENAME = '/graphql?query=%7B__typename%7D';

async function expectRefused(response: Response) {
  expect(response.status).toBe(403);
  expect(response.headers.get('content-type')).toMatch(/json/);
  const body = (await response.json()) as { errors?: { message: string }[]; data?: unknown };
  expect(body.data).toBeUndefined();
  expect(body.errors).toEqual([expect.objectContaining({ message: 'Required CSRF header(s) not present' })]);
}

describe('requests a browser sends without a preflight', () => {
  it('refuses a GET without a CSRF header with a 403 GraphQL error', async () => {
    await expectRefused(await server.request(TYPENAME, { headers: { accept: 'application/json' } }));
  });

  it.each([
    ['application/x-www-form-urlencoded', 'query=%7B__typename%7D'],
    ['text/plain', JSON.stringify({ query: '{ __typename }' })],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n{ __typename }\r\n--x--\r\n',
    ],
  ])('refuses a POST of %s without a CSRF header', async (contentType, body) => {
    await expectRefused(
      await server.request('/graphql', { method: 'POST', headers: { 'content-type': contentType }, body }),
    );
  });

  it.each(['x-graphql-yoga-csrf', 'apollo-require-preflight', 'x-apollo-operation-name'])(
    'serves a GET that carries %s',
    async (header) => {
      const response = await server.request(TYPENAME, {
        headers: { accept: 'application/json', [header]: '1' },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
    },
  );
});

describe('requests that are preflighted or not GraphQL', () => {
  it('serves a POST of application/json without the header (a browser preflights it)', async () => {
    const reply = await server.graphql('{ __typename }');
    expect(reply).toEqual({ status: 200, body: { data: { __typename: 'Query' } } });
  });

  it('leaves /api/v1 as its contract is: no header needed', async () => {
    const response = await server.request('/api/v1/products?per_page=1');
    expect(response.status).toBe(200);
  });

  it('serves the GraphiQL page to a browser without the header', async () => {
    const response = await server.request('/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    await response.arrayBuffer();
  });

  it('lets an allowed origin send the header (CORS preflight)', async () => {
    const response = await server.request('/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-graphql-yoga-csrf',
      },
    });
    expect(response.status).toBeLessThan(300);
    expect(response.headers.get('access-control-allow-headers')).toMatch(/x-graphql-yoga-csrf/);
  });
});
