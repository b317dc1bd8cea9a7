import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { oneRequestPerConnection } from '../../src/http/one-request-per-connection';

/**
 * The pipelining bound on its own, on a plain node:http server over real sockets (the server's
 * suite, test/http/pipelining.test.ts, runs it inside the gateway). Each request is answered at
 * once, so what is measured is the wrapper, not a handler's wait.
 */

const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
let server: Server | undefined;

afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A loop-turn counter: it moves once per turn of the event loop (its check phase). */
function loopTurns() {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns += 1;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turns, stop: () => (running = false) };
}

async function listen(onRequest: () => void, maxWaiting: number, onOverflow?: () => void) {
  server = createServer(
    oneRequestPerConnection(
      (_req, res) => {
        onRequest();
        res.end('ok');
      },
      { maxWaiting, onOverflow },
    ),
  );
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** Writes `count` pipelined requests in one go; resolves with the answers once the socket closes or all came. */
function pipelined(port: number, count: number): Promise<{ answers: number; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(HEALTHZ.repeat(count)));
    let answers = 0;
    socket.on('data', (chunk: Buffer) => {
      answers += chunk.toString('latin1').split('HTTP/1.1 200').length - 1;
      if (answers === count) {
        socket.destroy();
        resolve({ answers, closed: false });
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ answers, closed: true }));
  });
}

describe('one request at a time per connection', () => {
  it('starts each pipelined request in a later turn of the event loop than the one before', async () => {
    const turns = loopTurns();
    const startedAt: number[] = [];
    const port = await listen(() => startedAt.push(turns.now()), 16);
    const { answers, closed } = await pipelined(port, 10);
    turns.stop();
    expect([answers, closed]).toEqual([10, false]);
    // Before: all ten ran in one turn, each in the close callback of the answer before it.
    for (let n = 1; n < startedAt.length; n++) expect(startedAt[n]).toBeGreaterThan(startedAt[n - 1]!);
  });

  it('closes a connection that pipelines past the bound, runs none of the rest, and keeps stacks on', async () => {
    let ran = 0;
    let overflows = 0;
    const stackLimit = Error.stackTraceLimit;
    const port = await listen(
      () => (ran += 1),
      16,
      () => (overflows += 1),
    );
    const { closed } = await pipelined(port, 1_000);
    expect(closed).toBe(true);
    expect(overflows).toBe(1);
    expect(ran).toBe(1);
    // The stacks node:http's aborts would format are skipped only while the closed socket's listeners run.
    expect(Error.stackTraceLimit).toBe(stackLimit);
    expect(new Error('after').stack).toContain('one-request-per-connection.test');
  });
});
