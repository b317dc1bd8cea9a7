import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startOtlpReceiver, SPAN_KIND_SERVER, type ReceivedSpan } from '../support/otlp-receiver';
import { listeningUrl, spawnServer, waitUntil } from '../support/processes';
import { TEST_JWT_SECRET } from '../support/server';

/** A real server process exporting to an OTLP receiver the test runs (issue 12, tracing). */

let testDb: TestDatabase;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let child: ChildProcessWithoutNullStreams;
let url: string;
let stdout = '';

beforeAll(async () => {
  testDb = await openTestDatabase('tracing');
  await loadFixtures(testDb.db);
  receiver = await startOtlpReceiver();
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(MONGODB_|JWT_|PORT$|DATA_DIR$|OTEL_)/.test(name)),
  );
  child = spawnServer({
    ...inherited,
    NODE_ENV: 'test',
    PORT: '0',
    MONGODB_URI: testDb.uri,
    MONGODB_DB: testDb.dbName,
    JWT_SECRET: TEST_JWT_SECRET,
    SEED_FIXTURES: 'false',
    LOG_LEVEL: 'info',
    RESPONSE_CACHE_TTL_MS: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: 'storefront-tracing-test',
  });
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  url = await listeningUrl(child);
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await receiver?.close();
  await testDb?.close();
});

function traceparent(): { header: string; traceId: string; parentId: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${parentId}-01`, traceId, parentId };
}

async function spansOf(traceId: string, until: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  const mine = () => receiver.spans.filter((span) => span.traceId === traceId);
  await waitUntil(() => until(mine()), 10_000);
  return mine();
}

const isMongoFind = (span: ReceivedSpan) =>
  span.scope.includes('mongodb') &&
  /find|aggregate/.test(span.name) &&
  JSON.stringify(span).includes('products');

function requestLogLine(traceId: string): Record<string, unknown> | undefined {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((line) => line.msg === 'request' && line.traceId === traceId);
}

function expectOneRequestTrace(spans: ReceivedSpan[], parentId: string): ReceivedSpan {
  const servers = spans.filter((span) => span.kind === SPAN_KIND_SERVER && span.scope.includes('http'));
  expect(servers).toHaveLength(1);
  const server = servers[0] as ReceivedSpan;
  expect(server.parentSpanId).toBe(parentId);
  // Every other span of the trace descends from the HTTP span.
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) {
    if (span === server) continue;
    let parent = span.parentSpanId;
    while (parent && parent !== server.spanId)
      parent = spans.find((other) => other.spanId === parent)?.parentSpanId;
    expect(parent, `${span.name} under the HTTP span`).toBe(server.spanId);
    expect(ids.has(span.parentSpanId as string)).toBe(true);
  }
  return server;
}

describe('OpenTelemetry tracing', () => {
  it('continues the incoming traceparent through GraphQL parse/validate/execute into MongoDB', async () => {
    const { header, traceId, parentId } = traceparent();
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: header },
      body: JSON.stringify({ query: 'query FirstTwo { products(first: 2) { edges { node { name } } } }' }),
    });
    expect(response.status).toBe(200);
    const spans = await spansOf(
      traceId,
      (found) => found.some(isMongoFind) && found.some((span) => span.kind === SPAN_KIND_SERVER),
    );
    const names = spans.map((span) => span.name);
    console.log(`GraphQL trace ${traceId}: ${names.join(', ')}`);
    expectOneRequestTrace(spans, parentId);
    expect(names).toContain('graphql.parse');
    expect(names).toContain('graphql.validate');
    expect(names).toContain('graphql.execute query.FirstTwo');
    expect(spans.some(isMongoFind)).toBe(true);
    expect(requestLogLine(traceId)).toMatchObject({ route: '/graphql', status: 200 });
  });

  it('continues it through an /api/v1 page into MongoDB', async () => {
    const { header, traceId, parentId } = traceparent();
    const response = await fetch(`${url}/api/v1/products?per_page=2`, { headers: { traceparent: header } });
    expect(response.status).toBe(200);
    const spans = await spansOf(
      traceId,
      (found) => found.some(isMongoFind) && found.some((span) => span.kind === SPAN_KIND_SERVER),
    );
    console.log(`REST trace ${traceId}: ${spans.map((span) => span.name).join(', ')}`);
    expectOneRequestTrace(spans, parentId);
    expect(spans.some(isMongoFind)).toBe(true);
    expect(requestLogLine(traceId)).toMatchObject({ route: '/api/v1/products', status: 200 });
  });

  it('starts one new trace per request without a traceparent, logged with its id', async () => {
    const before = new Set(receiver.spans.map((span) => span.traceId));
    for (let index = 0; index < 3; index += 1) {
      expect((await fetch(`${url}/api/v1/products?per_page=1&page=${index + 1}`)).status).toBe(200);
    }
    const newServerSpans = () =>
      receiver.spans.filter((span) => span.kind === SPAN_KIND_SERVER && !before.has(span.traceId));
    await waitUntil(() => newServerSpans().length >= 3, 10_000);
    const traceIds = new Set(newServerSpans().map((span) => span.traceId));
    expect(traceIds.size).toBe(3);
    for (const traceId of traceIds) {
      expect(newServerSpans().filter((span) => span.traceId === traceId)).toHaveLength(1);
      expect(requestLogLine(traceId)).toMatchObject({ route: '/api/v1/products', status: 200 });
    }
  });
});
