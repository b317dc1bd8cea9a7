import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/** Cases the contract leaves open, decided as a Laravel client would expect (README, "Decisions"). */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const get = async (path: string) => {
  const response = await server.request(path);
  return { status: response.status, body: await response.json() };
};

describe('Laravel-compatible details', () => {
  it('takes the last of repeated query parameters, and links keep only that one', async () => {
    const { status, body } = await get(
      '/api/v1/products?search=northwind&search=soundwave&per_page=1&per_page=5',
    );
    expect(status).toBe(200);
    expect(body.data.map((product: { id: number }) => product.id)).toEqual([16, 17]);
    expect(body.meta.per_page).toBe(5);
    expect(body.links.first).toBe(`${server.url}/api/v1/products?search=soundwave&per_page=5&page=1`);
  });

  it('drops blank parameters from links', async () => {
    const { body } = await get('/api/v1/products?search=&category=%20&per_page=10');
    expect(body.meta.total).toBe(20);
    expect(body.links.next).toBe(`${server.url}/api/v1/products?per_page=10&page=2`);
  });

  it('rejects integers with leading zeros, as FILTER_VALIDATE_INT does', async () => {
    const { status, body } = await get('/api/v1/products?per_page=02');
    expect(status).toBe(422);
    expect(body).toEqual({
      message: 'The per page field must be an integer.',
      errors: { per_page: ['The per page field must be an integer.'] },
    });
    expect((await get('/api/v1/products?page=0')).status).toBe(422);
  });

  it('ignores one trailing slash on a route', async () => {
    const { status, body } = await get('/api/v1/products/?per_page=1');
    expect(status).toBe(200);
    expect(body.data).toHaveLength(1);
    expect(body.links.first).toBe(`${server.url}/api/v1/products?per_page=1&page=1`);
    expect((await get('/api/v1/products/search/?term=c%2B%2B')).body.data[0].id).toBe(11);
    expect((await get('/api/v1//')).status).toBe(404);
  });
});
