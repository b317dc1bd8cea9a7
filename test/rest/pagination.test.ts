import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { call, ids, range, withQuery } from './helpers';

/**
 * Paginator arithmetic at the edges, and the links: absolute, on the configured public URL or the
 * request's origin, keeping search/category/term/per_page (in request order) and setting page last.
 */

let server: TestServer;
let list: string; // absolute address of the list endpoint on the test server
let search: string;
beforeAll(async () => {
  server = await startTestServer();
  list = `${server.url}/api/v1/products`;
  search = `${server.url}/api/v1/products/search`;
});
afterAll(() => server.stop());

const get = (path: string, query: Record<string, string> | [string, string][] = {}) =>
  call(server, withQuery(path, query));

describe('defaults', () => {
  it('page 1, 15 per page: ids 1-15, next → page=2', async () => {
    const reply = await get('/api/v1/products');
    expect(reply.status).toBe(200);
    expect(ids(reply)).toEqual(range(1, 15));
    expect(reply.body.meta).toEqual({
      current_page: 1,
      from: 1,
      last_page: 2,
      per_page: 15,
      to: 15,
      total: 20,
    });
    expect(reply.body.links).toEqual({
      first: `${list}?page=1`,
      last: `${list}?page=2`,
      prev: null,
      next: `${list}?page=2`,
    });
  });

  it('page 2 of the defaults is the partial last page: ids 16-20, from 16 to 20', async () => {
    const reply = await get('/api/v1/products', { page: '2' });
    expect(ids(reply)).toEqual(range(16, 20));
    expect(reply.body.meta).toEqual({
      current_page: 2,
      from: 16,
      last_page: 2,
      per_page: 15,
      to: 20,
      total: 20,
    });
    expect(reply.body.links).toEqual({
      first: `${list}?page=1`,
      last: `${list}?page=2`,
      prev: `${list}?page=1`,
      next: null,
    });
  });

  it('the envelope has exactly data, links and meta, in that order', async () => {
    const reply = await get('/api/v1/products');
    expect(Object.keys(reply.body)).toEqual(['data', 'links', 'meta']);
    expect(Object.keys(reply.body.links)).toEqual(['first', 'last', 'prev', 'next']);
    expect(Object.keys(reply.body.meta)).toEqual([
      'current_page',
      'from',
      'last_page',
      'per_page',
      'to',
      'total',
    ]);
  });
});

describe('arithmetic at the edges', () => {
  it('total 0: a search that matches nothing', async () => {
    const reply = await get('/api/v1/products', { search: 'zzz-matches-nothing' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      data: [],
      links: {
        first: `${list}?search=zzz-matches-nothing&page=1`,
        last: `${list}?search=zzz-matches-nothing&page=1`,
        prev: null,
        next: null,
      },
      meta: { current_page: 1, from: null, last_page: 1, per_page: 15, to: null, total: 0 },
    });
  });

  it('total 0 on the search endpoint as well', async () => {
    const reply = await get('/api/v1/products/search', { term: 'zzz' });
    expect(reply.body.meta).toEqual({
      current_page: 1,
      from: null,
      last_page: 1,
      per_page: 15,
      to: null,
      total: 0,
    });
    expect(reply.body.links).toEqual({
      first: `${search}?term=zzz&page=1`,
      last: `${search}?term=zzz&page=1`,
      prev: null,
      next: null,
    });
  });

  it('total 0 and page 3: still last_page 1, prev → page 2, next null', async () => {
    const reply = await get('/api/v1/products', { search: 'zzz', page: '3' });
    expect(reply.body.meta).toEqual({
      current_page: 3,
      from: null,
      last_page: 1,
      per_page: 15,
      to: null,
      total: 0,
    });
    expect(reply.body.links.prev).toBe(`${list}?search=zzz&page=2`);
    expect(reply.body.links.next).toBeNull();
  });

  it('total equal to per_page (20 of 20): one page, no next', async () => {
    const reply = await get('/api/v1/products', { per_page: '20' });
    expect(ids(reply)).toEqual(range(1, 20));
    expect(reply.body.meta).toEqual({
      current_page: 1,
      from: 1,
      last_page: 1,
      per_page: 20,
      to: 20,
      total: 20,
    });
    expect(reply.body.links).toEqual({
      first: `${list}?per_page=20&page=1`,
      last: `${list}?per_page=20&page=1`,
      prev: null,
      next: null,
    });
  });

  it('total equal to per_page inside a category (software, 5 per page)', async () => {
    const reply = await get('/api/v1/products', { category: 'software', per_page: '5' });
    expect(ids(reply)).toEqual(range(11, 15));
    expect(reply.body.meta).toMatchObject({ last_page: 1, from: 1, to: 5, total: 5 });
    expect(reply.body.links.next).toBeNull();
  });

  it('per_page one more than total (21): one page', async () => {
    const reply = await get('/api/v1/products', { per_page: '21' });
    expect(reply.body.meta).toMatchObject({ last_page: 1, to: 20, total: 20 });
  });

  it('per_page one less than total (19): two pages, the second holding id 20 alone', async () => {
    const reply = await get('/api/v1/products', { per_page: '19', page: '2' });
    expect(ids(reply)).toEqual([20]);
    expect(reply.body.meta).toEqual({
      current_page: 2,
      from: 20,
      last_page: 2,
      per_page: 19,
      to: 20,
      total: 20,
    });
  });

  it('last partial page: category=software&per_page=2&page=3 → one item, from 5 to 5', async () => {
    const reply = await get('/api/v1/products', { category: 'software', per_page: '2', page: '3' });
    expect(ids(reply)).toEqual([15]);
    expect(reply.body.meta).toEqual({ current_page: 3, from: 5, last_page: 3, per_page: 2, to: 5, total: 5 });
    const base = `${list}?category=software&per_page=2`;
    expect(reply.body.links).toEqual({
      first: `${base}&page=1`,
      last: `${base}&page=3`,
      prev: `${base}&page=2`,
      next: null,
    });
  });

  it('page past the end (200): 200 with data [], from/to null, prev → page 199, next null', async () => {
    const reply = await get('/api/v1/products', { page: '200' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      data: [],
      links: {
        first: `${list}?page=1`,
        last: `${list}?page=2`,
        prev: `${list}?page=199`,
        next: null,
      },
      meta: { current_page: 200, from: null, last_page: 2, per_page: 15, to: null, total: 20 },
    });
  });

  it('the first page past the end (software, 2 per page, page 4)', async () => {
    const reply = await get('/api/v1/products', { category: 'software', per_page: '2', page: '4' });
    expect(ids(reply)).toEqual([]);
    expect(reply.body.meta).toEqual({
      current_page: 4,
      from: null,
      last_page: 3,
      per_page: 2,
      to: null,
      total: 5,
    });
    expect(reply.body.links.prev).toBe(`${list}?category=software&per_page=2&page=3`);
    expect(reply.body.links.next).toBeNull();
  });

  it('one per page: last_page equals total, and a middle page links both ways', async () => {
    const reply = await get('/api/v1/products', { per_page: '1', page: '7' });
    expect(ids(reply)).toEqual([7]);
    expect(reply.body.meta).toEqual({
      current_page: 7,
      from: 7,
      last_page: 20,
      per_page: 1,
      to: 7,
      total: 20,
    });
    expect(reply.body.links).toEqual({
      first: `${list}?per_page=1&page=1`,
      last: `${list}?per_page=1&page=20`,
      prev: `${list}?per_page=1&page=6`,
      next: `${list}?per_page=1&page=8`,
    });
  });

  it('pages are stable, ordered by id: walking every page of 7 yields 1-20 once each', async () => {
    const seen: number[] = [];
    let next: string | null = `/api/v1/products?per_page=7`;
    let pages = 0;
    while (next) {
      const reply = await call(server, next.replace(server.url, ''));
      seen.push(...ids(reply));
      next = reply.body.links.next;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(range(1, 20));
  });

  it('a search spanning pages: "soundwave" one per page', async () => {
    const first = await get('/api/v1/products/search', { term: 'soundwave', per_page: '1' });
    const second = await get('/api/v1/products/search', { term: 'soundwave', per_page: '1', page: '2' });
    expect([...ids(first), ...ids(second)]).toEqual([16, 17]);
    expect(first.body.meta).toEqual({ current_page: 1, from: 1, last_page: 2, per_page: 1, to: 1, total: 2 });
    expect(first.body.links.next).toBe(`${search}?term=soundwave&per_page=1&page=2`);
    expect(second.body.meta).toEqual({
      current_page: 2,
      from: 2,
      last_page: 2,
      per_page: 1,
      to: 2,
      total: 2,
    });
    expect(second.body.links.next).toBeNull();
  });
});

describe('links', () => {
  it('keep search, category and per_page in a fixed order, drop other parameters, put page last', async () => {
    const reply = await get('/api/v1/products', [
      ['page', '1'],
      ['foo', 'bar'],
      ['search', 'gift'],
      ['utm_source', 'mail'],
      ['per_page', '2'],
      ['category', 'Gift Cards'],
    ]);
    // One order whatever the request's, so every spelling of a request is one cached page.
    const base = `${list}?search=gift&category=Gift+Cards&per_page=2`;
    expect(reply.body.links).toEqual({
      first: `${base}&page=1`,
      last: `${base}&page=3`,
      prev: null,
      next: `${base}&page=2`,
    });
  });

  it('keep term and per_page on the search endpoint and drop the rest', async () => {
    const reply = await get('/api/v1/products/search', [
      ['foo', 'bar'],
      ['term', 'gift'],
      ['per_page', '2'],
      ['page', '2'],
    ]);
    const base = `${search}?term=gift&per_page=2`;
    expect(reply.body.links).toEqual({
      first: `${base}&page=1`,
      last: `${base}&page=3`,
      prev: `${base}&page=1`,
      next: `${base}&page=3`,
    });
  });

  it('are absolute URLs on the request origin by default', async () => {
    const reply = await get('/api/v1/products');
    for (const link of Object.values(reply.body.links).filter(Boolean) as string[]) {
      expect(new URL(link).origin).toBe(server.url);
    }
  });

  it('take the origin from the request (Host header) when no public URL is configured', async () => {
    const body = await new Promise<{ links: Record<string, string | null> }>((resolve, reject) => {
      const request = http.get(
        `${server.url}/api/v1/products?per_page=5`,
        { headers: { host: 'storefront.internal:8080' } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(JSON.parse(text)));
        },
      );
      request.on('error', reject);
    });
    expect(body.links.next).toBe('http://storefront.internal:8080/api/v1/products?per_page=5&page=2');
  });

  it('URL-encode values, with a space as +', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ search: 'gift card' }, 'search=gift+card'],
      [{ search: 'C++' }, 'search=C%2B%2B'],
      [{ search: 'café' }, 'search=caf%C3%A9'],
      [{ search: '🎮' }, 'search=%F0%9F%8E%AE'],
      [{ search: 'a&b=c' }, 'search=a%26b%3Dc'],
      [{ category: 'Game Credit' }, 'category=Game+Credit'],
    ];
    for (const [query, encoded] of cases) {
      const reply = await get('/api/v1/products', query);
      expect(reply.body.links.first, JSON.stringify(query)).toBe(`${list}?${encoded}&page=1`);
    }
    const term = await get('/api/v1/products/search', { term: 'C++ studio' });
    expect(term.body.links.first).toBe(`${search}?term=C%2B%2B+studio&page=1`);
  });
});

describe('links with PUBLIC_BASE_URL configured', () => {
  let configured: TestServer;
  beforeAll(async () => {
    configured = await startTestServer({ env: { PUBLIC_BASE_URL: 'https://shop.example.com/' } });
  });
  afterAll(() => configured.stop());

  it('use the public URL (trailing slash removed), not the request origin', async () => {
    const reply = await call(
      configured,
      withQuery('/api/v1/products', { category: 'software', per_page: '2' }),
    );
    const base = 'https://shop.example.com/api/v1/products?category=software&per_page=2';
    expect(reply.body.links).toEqual({
      first: `${base}&page=1`,
      last: `${base}&page=3`,
      prev: null,
      next: `${base}&page=2`,
    });
  });

  it('on the search endpoint too', async () => {
    const reply = await call(
      configured,
      withQuery('/api/v1/products/search', { term: 'soundwave', per_page: '1' }),
    );
    expect(reply.body.links.next).toBe(
      'https://shop.example.com/api/v1/products/search?term=soundwave&per_page=1&page=2',
    );
  });
});
