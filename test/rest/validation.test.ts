import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { call, expectValidationError, ids, range, withQuery } from './helpers';

/**
 * 422 rules of the product endpoints (Laravel-style bodies: a summary message plus every bad field
 * under `errors`), and the values that are *not* errors (blank means default, bounds inclusive).
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const get = (path: string, query: Record<string, string> | [string, string][] = {}) =>
  call(server, withQuery(path, query));

const MUST_BE_INTEGER = (field: string) => `The ${field} field must be an integer.`;
const AT_LEAST_ONE = (field: string) => `The ${field} field must be at least 1.`;
const TERM_REQUIRED = 'The term field is required.';

/** Both paged endpoints: the list, and the search with a valid term. */
const ENDPOINTS: [string, string, Record<string, string>][] = [
  ['GET /api/v1/products', '/api/v1/products', {}],
  ['GET /api/v1/products/search', '/api/v1/products/search', { term: 'gift' }],
];

const BAD_PAGE_VALUES: [string, string, string][] = [
  ['zero', '0', AT_LEAST_ONE('page')],
  ['negative', '-1', AT_LEAST_ONE('page')],
  ['minus zero', '-0', AT_LEAST_ONE('page')],
  ['a word', 'abc', MUST_BE_INTEGER('page')],
  ['a decimal', '1.5', MUST_BE_INTEGER('page')],
  ['a whole decimal', '1.0', MUST_BE_INTEGER('page')],
  ['exponent notation', '1e2', MUST_BE_INTEGER('page')],
  ['hexadecimal', '0x10', MUST_BE_INTEGER('page')],
  ['digits then text', '2abc', MUST_BE_INTEGER('page')],
  ['Infinity', 'Infinity', MUST_BE_INTEGER('page')],
  ['an inner space', '1 2', MUST_BE_INTEGER('page')],
  ['one past the 32-bit maximum', '2147483648', 'The page field must not be greater than 2147483647.'],
  ['beyond safe integers', '99999999999999999999', MUST_BE_INTEGER('page')],
];

const BAD_PER_PAGE_VALUES: [string, string, string][] = [
  ['zero', '0', AT_LEAST_ONE('per page')],
  ['negative', '-5', AT_LEAST_ONE('per page')],
  ['one over the maximum', '101', 'The per page field must not be greater than 100.'],
  ['far over the maximum', '1000000', 'The per page field must not be greater than 100.'],
  ['a word', 'abc', MUST_BE_INTEGER('per page')],
  ['a decimal', '1.5', MUST_BE_INTEGER('per page')],
  ['beyond safe integers', '99999999999999999999', MUST_BE_INTEGER('per page')],
];

for (const [name, path, base] of ENDPOINTS) {
  describe(`${name}: page and per_page`, () => {
    for (const [label, value, message] of BAD_PAGE_VALUES) {
      it(`page ${label} (${JSON.stringify(value)}) → 422 "${message}"`, async () => {
        expectValidationError(await get(path, { ...base, page: value }), message, { page: [message] });
      });
    }

    for (const [label, value, message] of BAD_PER_PAGE_VALUES) {
      it(`per_page ${label} (${JSON.stringify(value)}) → 422 "${message}"`, async () => {
        expectValidationError(await get(path, { ...base, per_page: value }), message, {
          per_page: [message],
        });
      });
    }

    it('both bad at once → "<first> (and 1 more error)" naming both fields', async () => {
      const reply = await get(path, { ...base, page: '0', per_page: '101' });
      expectValidationError(reply, 'The page field must be at least 1. (and 1 more error)', {
        page: ['The page field must be at least 1.'],
        per_page: ['The per page field must not be greater than 100.'],
      });
    });

    it('both non-integers at once name both fields', async () => {
      const reply = await get(path, { ...base, page: 'abc', per_page: '1.5' });
      expectValidationError(reply, `${MUST_BE_INTEGER('page')} (and 1 more error)`, {
        page: [MUST_BE_INTEGER('page')],
        per_page: [MUST_BE_INTEGER('per page')],
      });
    });

    it('blank page and per_page (empty or spaces) mean the defaults', async () => {
      for (const blank of ['', '   ']) {
        const reply = await get(path, { ...base, page: blank, per_page: blank });
        expect(reply.status, JSON.stringify(blank)).toBe(200);
        expect(reply.body.meta).toMatchObject({ current_page: 1, per_page: 15 });
      }
    });

    it('the bounds themselves are valid: page 1, per_page 1 and per_page 100', async () => {
      const bounds: Record<string, string>[] = [{ page: '1' }, { per_page: '1' }, { per_page: '100' }];
      for (const query of bounds) {
        const reply = await get(path, { ...base, ...query });
        expect(reply.status, JSON.stringify(query)).toBe(200);
      }
    });

    it('page 2147483647 (the largest allowed) is 200 with an empty page', async () => {
      const reply = await get(path, { ...base, page: '2147483647', per_page: '100' });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual([]);
      expect(reply.body.meta).toMatchObject({
        current_page: 2147483647,
        per_page: 100,
        from: null,
        to: null,
      });
    });

    it('integers with surrounding spaces are accepted (Laravel trims strings)', async () => {
      const reply = await get(path, { ...base, page: ' 1 ', per_page: ' 2' });
      expect(reply.status).toBe(200);
      expect(reply.body.meta).toMatchObject({ current_page: 1, per_page: 2 });
    });

    it('a plus sign is not an integer here: +2 → 422', async () => {
      const reply = await get(path, { ...base, page: '+1', per_page: '+2' });
      expectValidationError(reply, `${MUST_BE_INTEGER('page')} (and 1 more error)`, {
        page: [MUST_BE_INTEGER('page')],
        per_page: [MUST_BE_INTEGER('per page')],
      });
    });
  });
}

describe('GET /api/v1/products/search: term', () => {
  const REQUIRED_BODY = { message: TERM_REQUIRED, errors: { term: [TERM_REQUIRED] } };

  it('missing term → exactly the required body', async () => {
    const reply = await get('/api/v1/products/search');
    expect(reply.status).toBe(422);
    expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(reply.text).toBe(
      '{"message":"The term field is required.","errors":{"term":["The term field is required."]}}',
    );
  });

  for (const [label, term] of [
    ['empty', ''],
    ['spaces', '   '],
    ['tabs and newlines', '\t\n '],
  ]) {
    it(`blank term (${label}) → exactly the required body`, async () => {
      expectValidationError(await get('/api/v1/products/search', { term: term as string }), TERM_REQUIRED, {
        term: [TERM_REQUIRED],
      });
    });
  }

  it('term of 200 characters is accepted', async () => {
    const reply = await get('/api/v1/products/search', { term: 'a'.repeat(200) });
    expect(reply.status).toBe(200);
    expect(reply.body.meta.total).toBe(0);
  });

  it('term of 201 characters → "The term field must not be greater than 200 characters."', async () => {
    const message = 'The term field must not be greater than 200 characters.';
    expectValidationError(await get('/api/v1/products/search', { term: 'a'.repeat(201) }), message, {
      term: [message],
    });
  });

  it('counts characters, not bytes: 200 emoji pass, 201 fail', async () => {
    expect((await get('/api/v1/products/search', { term: '🎮'.repeat(200) })).status).toBe(200);
    expect((await get('/api/v1/products/search', { term: '🎮'.repeat(201) })).status).toBe(422);
  });

  it('measures the trimmed term: 200 characters inside spaces are accepted', async () => {
    expect((await get('/api/v1/products/search', { term: `  ${'a'.repeat(200)}  ` })).status).toBe(200);
  });

  it('a 10 kB term → 422, quickly', async () => {
    const started = performance.now();
    const reply = await get('/api/v1/products/search', { term: 'x'.repeat(10_240) });
    const elapsed = performance.now() - started;
    const message = 'The term field must not be greater than 200 characters.';
    expectValidationError(reply, message, { term: [message] });
    expect(elapsed).toBeLessThan(1_000);
  });

  it('a 10 kB term of words that each would match → 422, quickly', async () => {
    const started = performance.now();
    const reply = await get('/api/v1/products/search', { term: 'a '.repeat(5_120) + '.*' });
    expect(reply.status).toBe(422);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('missing term together with bad page and per_page → "(and 2 more errors)", term first', async () => {
    const reply = await get('/api/v1/products/search', { page: '0', per_page: '101' });
    expectValidationError(reply, `${TERM_REQUIRED} (and 2 more errors)`, {
      term: [TERM_REQUIRED],
      page: ['The page field must be at least 1.'],
      per_page: ['The per page field must not be greater than 100.'],
    });
  });

  it('ignores search on the search endpoint: search does not replace term', async () => {
    expectValidationError(await get('/api/v1/products/search', { search: 'gift' }), TERM_REQUIRED, {
      term: [TERM_REQUIRED],
    });
  });

  it('the exact required body does not change when the term is blank', async () => {
    const reply = await get('/api/v1/products/search', { term: ' ' });
    expect(reply.body).toEqual(REQUIRED_BODY);
  });
});

describe('GET /api/v1/products: search (our documented decision: also at most 200 characters)', () => {
  const message = 'The search field must not be greater than 200 characters.';

  it('search of 200 characters is accepted', async () => {
    const reply = await get('/api/v1/products', { search: 'a'.repeat(200) });
    expect(reply.status).toBe(200);
    expect(reply.body.meta.total).toBe(0);
  });

  it('search of 201 characters → 422', async () => {
    expectValidationError(await get('/api/v1/products', { search: 'a'.repeat(201) }), message, {
      search: [message],
    });
  });

  it('a 10 kB search → 422, quickly', async () => {
    const started = performance.now();
    const reply = await get('/api/v1/products', { search: 'x'.repeat(10_240) });
    expectValidationError(reply, message, { search: [message] });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('a long search together with bad page and per_page names all three, search first', async () => {
    const reply = await get('/api/v1/products', { search: 'a'.repeat(201), page: 'x', per_page: '0' });
    expectValidationError(reply, `${message} (and 2 more errors)`, {
      search: [message],
      page: [MUST_BE_INTEGER('page')],
      per_page: [AT_LEAST_ONE('per page')],
    });
  });

  it('a blank search is no filter, not an error', async () => {
    const reply = await get('/api/v1/products', { search: ' '.repeat(300) });
    expect(reply.status).toBe(200);
    expect(reply.body.meta.total).toBe(20);
  });

  it('valid requests stay valid next to unknown parameters', async () => {
    const reply = await get('/api/v1/products', { per_page: '20', foo: 'bar', page: '1' });
    expect(reply.status).toBe(200);
    expect(ids(reply)).toEqual(range(1, 20));
  });
});
