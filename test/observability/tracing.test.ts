import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { startOtlpReceiver, SPAN_KIND_SERVER, type ReceivedSpan } from '../support/otlp-receiver';
import { listeningUrl, serverProcessEnv, spawnServer, waitUntil } from '../support/processes';

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
  child = spawnServer({
    ...tracedServerEnv(receiver.url, 'http/json'),
  });
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  url = await listeningUrl(child);
}, 60_000);

function tracedServerEnv(endpoint: string, protocol: string): NodeJS.ProcessEnv {
  return serverProcessEnv(testDb, {
    RESPONSE_CACHE_TTL_MS: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    OTEL_SERVICE_NAME: 'storefront-tracing-test',
  });
}

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

// A page is a find or an aggregation; the instrumentation names an aggregation's span after the
// database's `$cmd`, not its collection.
const isMongoFind = (span: ReceivedSpan) =>
  span.scope.includes('mongodb') && /^(find products|aggregate )/.test(span.name);

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
  expect(server.name).toBe(
    `${String(server.attributes['http.method'] ?? server.attributes['http.request.method'])} ${String(server.attributes['http.route'])}`,
  );
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
    expect(expectOneRequestTrace(spans, parentId).name).toBe('POST /graphql');
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
    expect(expectOneRequestTrace(spans, parentId).name).toBe('GET /api/v1/products');
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

describe('OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (the SDK default)', () => {
  it('exports protobuf carrying the continued trace id and the service name', async () => {
    const protobufReceiver = await startOtlpReceiver();
    const protobufServer = spawnServer(tracedServerEnv(protobufReceiver.url, 'http/protobuf'));
    try {
      const protobufUrl = await listeningUrl(protobufServer);
      const { header, traceId, parentId } = traceparent();
      const response = await fetch(`${protobufUrl}/api/v1/products?per_page=1`, {
        headers: { traceparent: header },
      });
      expect(response.status).toBe(200);
      // The export with the server span (its parent is the caller's): the request's database spans
      // and the change feed's own may travel in other batches.
      const carrying = () =>
        protobufReceiver.exports.filter(
          (received) =>
            received.body.includes(Buffer.from(traceId, 'hex')) &&
            received.body.includes(Buffer.from(parentId, 'hex')),
        );
      expect(await waitUntil(() => carrying().length > 0, 10_000)).toBe(true);
      const received = carrying()[0] as (typeof protobufReceiver.exports)[number];
      expect(received.path).toBe('/v1/traces');
      expect(received.contentType).toBe('application/x-protobuf');
      expect(received.body.includes(Buffer.from('storefront-tracing-test'))).toBe(true);
      expect(protobufReceiver.spans).toEqual([]);
    } finally {
      const exited = new Promise((resolve) => protobufServer.once('exit', resolve));
      protobufServer.kill('SIGTERM');
      await exited;
      await protobufReceiver.close();
    }
  }, 60_000);
});

describe('tracing off (no OTLP endpoint)', () => {
  /** Reports every OpenTelemetry SDK module the server process resolves, on stderr. */
  const REPORT_SDK_MODULES = './test/support/report-sdk-modules.mjs';

  it('never loads the SDK, the instrumentations or the exporters', async () => {
    const env = tracedServerEnv('', 'http/json');
    delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const plain = spawn(
      process.execPath,
      ['--import', REPORT_SDK_MODULES, '--import', 'tsx', 'scripts/start.ts'],
      {
        env,
        stdio: 'pipe',
      },
    );
    let stderr = '';
    plain.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const plainUrl = await listeningUrl(plain);
      expect((await fetch(`${plainUrl}/api/v1/products?per_page=1`)).status).toBe(200);
      expect(
        (
          await fetch(`${plainUrl}/graphql?query=%7B__typename%7D`, {
            headers: { 'x-graphql-yoga-csrf': '1' },
          })
        ).status,
      ).toBe(200);
      expect(stderr).not.toContain('SDK MODULE');
    } finally {
      const exited = new Promise((resolve) => plain.once('exit', resolve));
      plain.kill('SIGTERM');
      await exited;
    }
  }, 60_000);

  it('would notice if it did (the hook sees the SDK of a traced server)', async () => {
    const traced = spawn(
      process.execPath,
      ['--import', REPORT_SDK_MODULES, '--import', 'tsx', 'scripts/start.ts'],
      { env: tracedServerEnv(receiver.url, 'http/json'), stdio: 'pipe' },
    );
    let stderr = '';
    traced.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await listeningUrl(traced);
      expect(stderr).toContain('SDK MODULE');
      expect(stderr).toContain('@opentelemetry/sdk-node');
    } finally {
      const exited = new Promise((resolve) => traced.once('exit', resolve));
      traced.kill('SIGTERM');
      await exited;
    }
  }, 60_000);
});
