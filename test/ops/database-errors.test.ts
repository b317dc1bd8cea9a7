import { MongoServerError } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { capturedLog } from '../support/captured-log';
import { failEveryRead } from '../support/failing-reads';
import { startTestServer, type TestServer } from '../support/server';

/**
 * The database answers with an error on every read, as a slow or failing server does: the answer
 * is the right status, and the log stays small however many fields fail. The failure is the
 * driver's own error class, raised where the driver raises it (a cursor's toArray).
 */

let server: TestServer;
const log = capturedLog();

beforeAll(async () => {
  server = await startTestServer({ logger: log.logger });
});
afterAll(() => server.stop());
afterEach(() => vi.restoreAllMocks());

/** What a server-side deadline (maxTimeMS) looks like from the driver. */
const maxTimeExpired = () =>
  new MongoServerError({
    ok: 0,
    code: 50,
    codeName: 'MaxTimeMSExpired',
    errmsg: 'operation exceeded time limit',
  });

const productIds = Array.from({ length: 100 }, (_, index) =>
  Buffer.from(`Product:${index + 1}`).toString('base64url'),
);
/** The 2.9 kB request: 20 aliases × `nodes` of 100 IDs, 2,000 failing entries. */
const AMPLIFYING = `query ($ids: [ID!]!) { ${Array.from(
  { length: 20 },
  (_, index) => `n${index}: nodes(ids: $ids) { id }`,
).join(' ')} }`;

const errorLines = () => log.lines.filter((line) => Number(line.level) >= 40);
/** Lines that carry a stack trace (frames), not just the error's first line. */
const withStack = (lines: Record<string, unknown>[]) =>
  lines.filter((line) => /\\n\s+at /.test(JSON.stringify(line)));

describe('a database deadline (MaxTimeMSExpired)', () => {
  it('is 503 with Retry-After on /api/v1 and SERVICE_UNAVAILABLE on GraphQL', async () => {
    failEveryRead(maxTimeExpired);
    const rest = await server.request('/api/v1/products?per_page=1');
    expect(rest.status).toBe(503);
    expect(rest.headers.get('retry-after')).toBe('5');
    expect(await rest.json()).toEqual({ message: 'Service Unavailable.' });

    const graphql = await server.graphql('{ products(first: 1) { edges { node { id } } } }');
    expect(graphql.status).toBe(503);
    expect(graphql.body.errors?.[0]).toMatchObject({
      message: 'Service Unavailable.',
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
  });
});

describe('a lost database backend', () => {
  const internalError = (errmsg: string) => () =>
    new MongoServerError({ ok: 0, code: 1, codeName: 'InternalError', errmsg });

  it.each([
    [
      'FerretDB without its PostgreSQL',
      internalError('write failed: write unix @->/db/.s.PGSQL.5432: write: broken pipe'),
    ],
    ['FerretDB while PostgreSQL stops', internalError('terminating connection due to administrator command')],
    [
      'a raw socket error from the driver',
      () => Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' }),
    ],
  ])('%s is 503 with Retry-After', async (_, error) => {
    failEveryRead(error);
    const rest = await server.request('/api/v1/products?per_page=1');
    expect(rest.status).toBe(503);
    expect(rest.headers.get('retry-after')).toBe('5');
  });

  it('any other InternalError stays a 500: a fault to look at', async () => {
    failEveryRead(internalError('BSON field is of the wrong type'));
    expect((await server.request('/api/v1/products?per_page=1')).status).toBe(500);
  });
});

describe('error logs while the database fails', () => {
  it('writes one line for one failure, on either API (it was two on GraphQL, three on REST)', async () => {
    failEveryRead(() => new Error('one unexpected database failure'));
    let before = log.lines.length;
    await server.graphql('{ products(first: 1) { edges { node { id } } } }');
    expect(errorLines().filter((line) => log.lines.indexOf(line) >= before)).toHaveLength(1);
    before = log.lines.length;
    expect((await server.request('/api/v1/products?per_page=1')).status).toBe(500);
    expect(errorLines().filter((line) => log.lines.indexOf(line) >= before)).toHaveLength(1);
  });

  it('writes a few lines for a request with 2,000 failing entries, a stack once', async () => {
    failEveryRead(() => new Error('the database said something nobody expected'));
    const before = log.lines.length;
    const reply = await server.graphql(AMPLIFYING, { ids: productIds });
    expect(reply.body.errors?.length).toBeGreaterThanOrEqual(20);
    const lines = errorLines().filter((line) => log.lines.indexOf(line) >= before);
    // Before: two lines per failing entry, each with its stack (1,902 lines, 963 kB).
    expect(lines.length).toBeLessThanOrEqual(5);
    expect(withStack(lines).length).toBeLessThanOrEqual(1);
  });

  it('writes a bounded number of lines per second under a burst of such requests', async () => {
    failEveryRead(() => new Error('another unexpected database failure'));
    const before = log.lines.length;
    const started = Date.now();
    await Promise.all(Array.from({ length: 17 }, () => server.graphql(AMPLIFYING, { ids: productIds })));
    // Let the once-a-second summary of what was left out be written.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const seconds = Math.max(1, (Date.now() - started) / 1_000);
    const lines = errorLines().filter((line) => log.lines.indexOf(line) >= before);
    expect(lines.length / seconds).toBeLessThanOrEqual(30);
    expect(withStack(lines).length).toBeLessThanOrEqual(1);
    expect(JSON.stringify(lines).length).toBeLessThan(40_000);
  });
});
