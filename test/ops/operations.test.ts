import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../support/captured-log';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

let server: TestServer;
const { logger, lines: logLines } = capturedLog();

beforeAll(async () => {
  server = await startTestServer({
    logger,
    env: { CORS_ORIGINS: 'https://shop.example.com', MAX_BODY_BYTES: '16384' },
  });
});
afterAll(() => server.stop());

describe('health', () => {
  it('/healthz says the process is up and /readyz that the database answers', async () => {
    const health = await server.request('/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await server.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });
});

describe('request logs', () => {
  it('writes one line per request with the request id, route, status and duration, and never the token', async () => {
    const token = await mintToken({ sub: 'cus_alice' });
    const response = await server.request('/api/v1/orders/01KE78KGFSQ4ZC7N2XW8RTB3MD', {
      headers: { ...bearer(token), 'x-request-id': 'client-id-42' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('client-id-42');

    const generated = await server.request('/api/v1/products');
    const generatedId = generated.headers.get('x-request-id');
    expect(generatedId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const unsafe = await server.request('/healthz', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(unsafe.headers.get('x-request-id')).not.toBe('bad id\twith spaces');

    await new Promise((resolve) => setTimeout(resolve, 50));
    const line = logLines.find((entry) => entry.requestId === 'client-id-42');
    expect(line).toMatchObject({
      msg: 'request',
      method: 'GET',
      route: '/api/v1/orders/{order}',
      status: 200,
      level: 30,
    });
    expect(typeof line?.durationMs).toBe('number');
    expect(logLines.filter((entry) => entry.requestId === generatedId)).toHaveLength(1);
    expect(JSON.stringify(logLines)).not.toContain(token);
  });
});

describe('metrics', () => {
  it('exposes Prometheus text with per-route HTTP, per-operation GraphQL and database latency', async () => {
    await server.request('/api/v1/products/search?term=gift');
    await server.graphql('query Cheapest { productPage(perPage: 1) { total } }');
    const response = await server.request('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/products\/search",status="200"\} \d+/,
    );
    expect(text).toMatch(/graphql_envelop_phase_execute_count\{[^}]*operationName="other"[^}]*\} \d+/);
    expect(text).toMatch(
      /mongodb_query_duration_seconds_count\{query="products.findPage",outcome="ok"\} \d+/,
    );
    expect(text).toContain('process_resident_memory_bytes');
  });
});

describe('limits', () => {
  it('rejects documents with too many aliases, tokens or directives, quickly', async () => {
    expect(
      (await server.graphql('{ products { edges { node { variant { price { amount } } } } } }')).body.errors,
    ).toBeUndefined();

    const aliases = Array.from({ length: 21 }, (_, index) => `a${index}: productPage { total }`).join(' ');
    const aliased = await server.graphql(`{ ${aliases} }`);
    expect(aliased.body.errors?.[0]?.message).toMatch(/aliases/i);

    const tokens = Array.from({ length: 2100 }, () => 'name').join(' ');
    const started = performance.now();
    const long = await server.graphql(`{ productPage { items { ${tokens} } } }`);
    expect(long.body.errors?.[0]?.message).toMatch(/token/i);
    expect(performance.now() - started).toBeLessThan(1_000);

    const fullPage = `products(first: 100) { edges { node { name description shortDescription notes
      categoryName brandName brandId images region channel tags isPermanentOutOfStock discountPercentage
      createdAt updatedAt variant { name price { amount currency formatted decimal localizedDecimal }
      faceValue { amount currency formatted decimal localizedDecimal } } } } }`;
    expect((await server.graphql(`{ ${fullPage} }`)).body.errors).toBeUndefined();
    const pages = Array.from({ length: 20 }, (_, index) => `p${index}: ${fullPage}`).join(' ');
    const costly = await server.graphql(`{ ${pages} }`);
    expect(costly.body.errors?.[0]?.message).toMatch(/cost limit of 150000 exceeded/i);

    const directives = await server.graphql(`{ productPage { total ${'@include(if: true) '.repeat(11)} } }`);
    expect(directives.body.errors?.[0]?.message).toMatch(/directive/i);
  });

  it("rejects a query deeper than 24 levels, but not GraphiQL's introspection", async () => {
    // Only introspection types nest freely in this schema, so they make the deep document.
    const deep = `{ __schema { types { fields { type ${'{ ofType '.repeat(22)}{ name }${' }'.repeat(22)} } } } }`;
    const reply = await server.graphql(deep);
    expect(reply.body.errors?.[0]?.message).toMatch(/depth/i);
    const graphiql = await server.graphql(getIntrospectionQuery());
    expect(graphiql.body.errors).toBeUndefined();
  });

  it('bounds batched requests', async () => {
    const batch = Array.from({ length: 11 }, () => ({ query: '{ __typename }' }));
    const response = await server.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(await response.text()).toMatch(/batch/i);
    const small = await server.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch.slice(0, 2)),
    });
    expect(small.status).toBe(200);
    expect(await small.json()).toHaveLength(2);
  });

  it('refuses request bodies over the configured size on both APIs', async () => {
    const body = JSON.stringify({ query: `{ __typename }`, variables: { pad: 'x'.repeat(20_000) } });
    const graphql = await server.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(graphql.status).toBe(413);
    expect(await graphql.json()).toEqual({
      message: 'The request body must not be larger than 16384 bytes.',
    });
    const rest = await server.request('/api/v1/products', { method: 'POST', body });
    expect(rest.status).toBe(413);
  });

  it('allows introspection in development and test', async () => {
    const reply = await server.graphql('{ __schema { queryType { name } } }');
    expect(reply.body.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('CORS and HTML headers', () => {
  it('answers preflight for an allowed origin only', async () => {
    const allowed = await server.request('/api/v1/products', {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'GET' },
    });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
    const simple = await server.request('/api/v1/products', {
      headers: { origin: 'https://shop.example.com' },
    });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
    const other = await server.request('/api/v1/products', { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
  });

  it('serves GraphiQL without a CDN and with security headers', async () => {
    const response = await server.request('/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).not.toContain('unpkg.com');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('production defaults', () => {
  let production: TestServer;
  beforeAll(async () => {
    production = await startTestServer({
      env: { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://shop.example.com' },
    });
  });
  afterAll(() => production.stop());

  it('turns introspection and GraphiQL off, CORS stays off', async () => {
    const reply = await production.graphql('{ __schema { queryType { name } } }');
    expect(reply.body.errors?.[0]?.message).toMatch(/introspection/i);
    const page = await production.request('/graphql', { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toMatch(/graphiql/i);
    const cors = await production.request('/api/v1/products', {
      headers: { origin: 'https://shop.example.com' },
    });
    expect(cors.headers.get('access-control-allow-origin')).toBeNull();
    expect((await production.request('/api/v1/products')).status).toBe(200);
  });

  it('takes pagination links from PUBLIC_BASE_URL, never from the Host header', async () => {
    const body = (await (await production.request('/api/v1/products?per_page=1')).json()) as {
      links: { next: string };
    };
    expect(body.links.next).toBe('https://shop.example.com/api/v1/products?per_page=1&page=2');
  });

  it('has no public /metrics without METRICS_TOKEN', async () => {
    const response = await production.request('/metrics');
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('process_resident_memory_bytes');
  });
});

describe('METRICS_TOKEN', () => {
  let guarded: TestServer;
  const token = 'a-metrics-token-of-32-characters';
  beforeAll(async () => {
    guarded = await startTestServer({
      env: { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://shop.example.com', METRICS_TOKEN: token },
    });
  });
  afterAll(() => guarded.stop());

  it('serves /metrics to the bearer of the token only', async () => {
    expect((await guarded.request('/metrics')).status).toBe(401);
    const wrong = await guarded.request('/metrics', { headers: { authorization: `Bearer ${token}x` } });
    expect(wrong.status).toBe(401);
    const right = await guarded.request('/metrics', { headers: { authorization: `Bearer ${token}` } });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('process_resident_memory_bytes');
  });
});
