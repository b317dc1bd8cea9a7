import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Metric labels come from a fixed set, never from what a client sent: a unique operationName per
 * request, or an error path per aliased `nodes` entry, was a new series each (200,000 series, a
 * 54.8 MB scrape, +440 MB RSS after 100 requests; collected in production even with /metrics closed).
 */
let server: TestServer;
const folder = mkdtempSync(path.join(tmpdir(), 'metric-labels-'));
const KNOWN = 'query Known { productPage(perPage: 1) { total } }';

beforeAll(async () => {
  const manifest = path.join(folder, 'manifest.json');
  writeFileSync(manifest, JSON.stringify({ [createHash('sha256').update(KNOWN).digest('hex')]: KNOWN }));
  server = await startTestServer({
    env: { PERSISTED_OPERATIONS: 'apq', PERSISTED_OPERATIONS_MANIFEST: manifest },
  });
});
afterAll(async () => {
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

const orderId = (id: number) => Buffer.from(`Order:${id}`, 'utf8').toString('base64url');

/**
 * 20 fresh aliases × 100 order ids, each refused anonymously: 2,000 errors, each at its own path,
 * under a fresh operation name. (A second operation keeps graphql-jit off: its executor for this
 * document would be ~1 MB of the bounded document cache, which is not what this test measures.)
 */
function aliasedNodes(round: number): { query: string; operationName: string; variables: { ids: string[] } } {
  const aliases = Array.from({ length: 20 }, (_, alias) => `a${round}_${alias}: nodes(ids: $ids) { id }`);
  return {
    query: `query Nodes${round}($ids: [ID!]!) { ${aliases.join(' ')} } query Unused { __typename }`,
    operationName: `Nodes${round}`,
    variables: { ids: Array.from({ length: 100 }, (_, index) => orderId(round * 100 + index)) },
  };
}

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Heap still in use after a full collection: what the server keeps, not what it has yet to free. */
function retainedHeap(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

async function seriesCount(): Promise<{ series: number; bytes: number; text: string }> {
  const text = await (await server.request('/metrics')).text();
  const graphqlSeries = text.split('\n').filter((line) => line.startsWith('graphql_'));
  return { series: graphqlSeries.length, bytes: graphqlSeries.join('\n').length, text };
}

async function post(body: unknown): Promise<void> {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
}

describe('metric labels chosen by the client', () => {
  it('do not grow the series, the scrape or RSS', async () => {
    // Warm up every label the requests below can reach (operation types, phases, the REST names).
    await post(aliasedNodes(0));
    await post({ query: 'query Warm { productPage(perPage: 1) { total } }', operationName: 'Warm' });
    await post({ query: 'query { nope }' });
    await post({ query: 'query Warm { nope }', operationName: 'Warm' });
    const before = await seriesCount();
    const rssBefore = process.memoryUsage().rss;
    const heapBefore = retainedHeap();

    for (let round = 1; round <= 30; round++) {
      await post(aliasedNodes(round));
      const name = `Unique${round}x${'y'.repeat(200)}`;
      await post({ query: `query ${name} { productPage(perPage: 1) { total } }`, operationName: name });
      await post({ query: `query ${name} { nope }`, operationName: name });
    }

    // Before: the 60,000 series of 30 rounds stayed. RSS also holds garbage not yet collected.
    // Measured: ~24 MB kept before, ~7 MB after (the 30 documents in the parse cache).
    expect(retainedHeap() - heapBefore).toBeLessThan(14 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(400 * 1024 * 1024);
    const after = await seriesCount();
    expect(/Unique|Nodes/.test(after.text)).toBe(false);
    expect(/path="/.test(after.text)).toBe(false);
    expect(after.series).toBe(before.series);
    // Only the numbers may grow (a few digits per series).
    expect(after.bytes).toBeLessThan(before.bytes + 20 * before.series);
  });

  it('name the operations of the manifest, and one bucket each for unnamed and other ones', async () => {
    await post({ query: KNOWN });
    await post({ query: 'query Mine { productPage(perPage: 1) { total } }' });
    await post({ query: '{ productPage(perPage: 1) { total } }' });
    const { text } = await seriesCount();
    for (const name of ['Known', 'other', 'anonymous']) {
      expect(text).toMatch(
        new RegExp(`graphql_envelop_phase_execute_count\\{[^}]*operationName="${name}"[^}]*\\} \\d+`),
      );
    }
  });
});

/** The value of the one series of `metric` carrying every given label (any order), 0 if none yet. */
function seriesValue(text: string, metric: string, labels: Record<string, string>): number {
  const line = text
    .split('\n')
    .find(
      (candidate) =>
        candidate.startsWith(`${metric}{`) &&
        Object.entries(labels).every(([name, value]) => candidate.includes(`${name}="${value}"`)),
    );
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('GraphQL errors in /metrics', () => {
  it('are counted once each, by phase, under the operation that had them', async () => {
    const errorsOf = async (labels: Record<string, string>) =>
      seriesValue((await seriesCount()).text, 'graphql_envelop_error_result', labels);
    const executionsOf = async (labels: Record<string, string>) =>
      seriesValue((await seriesCount()).text, 'graphql_envelop_request', labels);
    const parse = { operationName: 'anonymous', operationType: 'unknown', phase: 'parse' };
    const validate = { operationName: 'Known', operationType: 'query', phase: 'validate' };
    const execute = { operationName: 'other', operationType: 'query', phase: 'execute' };
    const before = {
      parse: await errorsOf(parse),
      validate: await errorsOf(validate),
      execute: await errorsOf(execute),
      executions: await executionsOf({ operationName: 'other', operationType: 'query' }),
    };

    await post({ query: '{ productPage(' });
    await post({ query: 'query Known { nope }' });
    // Two orders asked for anonymously: two refusals in one execution.
    await post({
      query: 'query Refused($ids: [ID!]!) { nodes(ids: $ids) { id } } query Unused { __typename }',
      operationName: 'Refused',
      variables: { ids: [orderId(1), orderId(2)] },
    });

    expect(await errorsOf(parse)).toBe(before.parse + 1);
    expect(await errorsOf(validate)).toBe(before.validate + 1);
    expect(await errorsOf(execute)).toBe(before.execute + 2);
    expect(await executionsOf({ operationName: 'other', operationType: 'query' })).toBe(
      before.executions + 1,
    );
  });
});
