import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_CUSTOMERS } from '../../seed/fixtures';
import { capturedLog } from '../support/captured-log';
import { waitUntil } from '../support/processes';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';
import { subscribe } from '../support/sse';

/**
 * A live subscription's slot belongs to its stream: every way a subscription request can end
 * without becoming a stream (a batch, a 406, a client gone before the answer) gives it back.
 * Each of these kept `live_subscriptions` one higher for good before (issue 36, row 1): ten of
 * them locked a customer out of live orders until a restart.
 */

let server: TestServer;
let alice: Record<string, string>;
const { logger, lines: logLines } = capturedLog();
const VIEWER_ORDERS = 'subscription { viewerOrders { ulid } }';

beforeAll(async () => {
  server = await startTestServer({ logger, env: { LIVE_SUBSCRIPTIONS_PER_CUSTOMER: '2' } });
  alice = bearer(await mintToken({ sub: FIXTURE_CUSTOMERS.alice }));
});
afterAll(() => server?.stop());

const gauge = async () =>
  Number(/^live_subscriptions (\d+)$/m.exec(await (await server.request('/metrics')).text())?.[1]);

const post = (body: unknown, accept: string) =>
  server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...alice },
    body: JSON.stringify(body),
  });

describe('a subscription that never becomes a stream', () => {
  it.each([
    [
      'in a batch, Accept: application/json',
      [{ query: VIEWER_ORDERS }, { query: '{ __typename }' }],
      'application/json',
    ],
    ['in a batch, Accept: */*', [{ query: VIEWER_ORDERS }], '*/*'],
    ['in a batch, Accept: text/event-stream', [{ query: VIEWER_ORDERS }], 'text/event-stream'],
    ['as a plain JSON POST (406)', { query: VIEWER_ORDERS }, 'application/json'],
  ])('%s: its slot is free again once answered', async (_path, body, accept) => {
    const before = await gauge();
    // More than the customer's bound (2): a slot kept by any of them would refuse the next.
    for (let round = 0; round < 3; round += 1) {
      const response = await post(body, accept);
      await response.text();
      expect(response.status).toBeLessThan(500);
    }
    expect(await waitUntil(() => server.liveOrders.count() === 0, 2_000)).toBe(true);
    expect(await gauge()).toBe(before);
    const stream = await subscribe(server.url, VIEWER_ORDERS, {}, alice);
    await waitUntil(() => server.liveOrders.count() === 1, 2_000);
    expect(stream.completed()).toBe(false);
    expect(stream.results).toEqual([]);
    stream.close();
    expect(await waitUntil(() => server.liveOrders.count() === 0, 2_000)).toBe(true);
  });

  it('in a batch, is answered with an error that says so, beside the batch’s other results', async () => {
    const response = await post([{ query: VIEWER_ORDERS }, { query: '{ __typename }' }], 'application/json');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] }[];
    expect(body[0]?.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    expect(body[1]).toEqual({ data: { __typename: 'Query' } });
  });

  it('sent by a client that leaves before the answer: its slot is free again', async () => {
    const before = await gauge();
    const body = JSON.stringify({ query: VIEWER_ORDERS });
    for (let round = 0; round < 3; round += 1) {
      const socket = connect(server.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Accept: text/event-stream\r\nAuthorization: ${alice.authorization}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.destroy();
    }
    expect(await waitUntil(() => server.liveOrders.count() === 0, 3_000)).toBe(true);
    expect(await gauge()).toBe(before);
  });
});

describe('@include and @skip on a subscription’s root field (issue 36, row 6)', () => {
  it.each([
    ['@include(if: false)', 'subscription { viewerOrders @include(if: false) { ulid } }', alice],
    ['@skip(if: true)', 'subscription { viewerOrders @skip(if: true) { ulid } }', alice],
    ['@skip(if: false), anonymous', 'subscription { viewerOrders @skip(if: false) { ulid } }', {}],
    [
      'in a fragment',
      'subscription { ...F } fragment F on Subscription { viewerOrders @include(if: false) { ulid } }',
      alice,
    ],
  ])(
    '%s: GRAPHQL_VALIDATION_FAILED, as the GraphQL spec has it; nothing logged as an error',
    async (_name, query, headers) => {
      const errorsBefore = logLines.filter((line) => Number(line.level) >= 50).length;
      const ask = (accept: string) =>
        server.request('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept, ...headers },
          body: JSON.stringify({ query }),
        });
      const json = await ask('application/json');
      expect(json.status).toBe(400);
      const { errors } = (await json.json()) as {
        errors: { message: string; extensions: { code: string } }[];
      };
      expect(errors[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(errors[0]?.message).toMatch(/must not use @skip or @include/);
      const sse = await ask('text/event-stream');
      expect(sse.status).toBe(400);
      expect(await sse.text()).toMatch(/GRAPHQL_VALIDATION_FAILED/);
      expect(logLines.filter((line) => Number(line.level) >= 50).length).toBe(errorsBefore);
      expect(server.liveOrders.count()).toBe(0);
    },
  );
});
