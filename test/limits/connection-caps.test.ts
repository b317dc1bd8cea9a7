import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../support/captured-log';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Idle connections from one address (issue 28 row 7): one address cannot take the server's
 * descriptors from everyone else. Other loopback addresses (127.0.0.2 …) stand for other clients.
 */

let server: TestServer;
const log = capturedLog();
const sockets: net.Socket[] = [];

beforeAll(async () => {
  server = await startTestServer({
    fixtures: false,
    logger: log.logger,
    env: { MAX_CONNECTIONS: '60', MAX_CONNECTIONS_PER_ADDRESS: '20' },
  });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await server?.stop();
});

/** Opens `count` idle connections from `localAddress`; resolves with how many are still open a moment later. */
async function idleConnections(localAddress: string, count: number): Promise<number> {
  const { port } = new URL(server.url);
  const opened = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress });
          socket.on('error', () => undefined);
          socket.once('connect', () => resolve(socket));
          socket.once('close', () => resolve(socket));
          sockets.push(socket);
        }),
    ),
  );
  await sleep(300);
  return opened.filter((socket) => !socket.destroyed && !socket.closed).length;
}

function fetchFrom(localAddress: string, path: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = net.connect({ port: Number(new URL(server.url).port), host: '127.0.0.1', localAddress });
    let head = '';
    socket.on('data', (chunk: Buffer) => (head += chunk.toString('latin1')));
    socket.on('close', () => resolve(Number(head.slice(9, 12)) || 0));
    socket.on('error', () => undefined);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}

describe('connection caps', () => {
  it('keep 20 connections of one address and close the rest, while another address is served', async () => {
    // Before: all 50 stayed open, up to the process's descriptor limit.
    expect(await idleConnections('127.0.0.2', 50)).toBe(20);
    expect(await fetchFrom('127.0.0.3', '/healthz')).toBe(200);
    const line = log.lines.find((entry) => String(entry.msg).startsWith('connections refused'));
    expect(line).toMatchObject({ reason: 'connections-per-address', level: 40 });
  });

  it('keep at most 60 connections for the server', async () => {
    expect(await idleConnections('127.0.0.4', 20)).toBe(20);
    // 40 open now (20 above): the server cap leaves room for 20 more.
    expect(await idleConnections('127.0.0.5', 20)).toBe(20);
    expect(await fetchFrom('127.0.0.6', '/healthz')).toBe(0);
    await sleep(100);
    for (const socket of sockets.splice(0)) socket.destroy();
    await sleep(300);
    const metrics = await (await server.request('/metrics')).text();
    expect(metrics).toMatch(/bounded_refusals_total\{reason="connections-per-address"\} 30\b/);
    expect(metrics).toMatch(/bounded_refusals_total\{reason="connections-per-server"\} [1-9]/);
  });

  it('close every answered connection once the server holds 90 % of its cap (row 4 of issue 36)', async () => {
    const keptAlive = () =>
      new Promise<{ connection: string; closed: boolean }>((resolve) => {
        const socket = net.connect({ port: Number(new URL(server.url).port), host: '127.0.0.1' });
        let head = '';
        socket.on('error', () => undefined);
        socket.on('data', (chunk: Buffer) => {
          head += chunk.toString('latin1');
          if (!head.includes('\r\n\r\n')) return;
          const connection = /\r\nconnection: ([^\r]+)/i.exec(head)?.[1] ?? '';
          // Closed by the server, or still open a moment after the answer.
          setTimeout(() => {
            resolve({
              connection: connection.toLowerCase(),
              closed: socket.destroyed || socket.readableEnded,
            });
            socket.destroy();
          }, 200);
        });
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      });
    expect(await keptAlive()).toEqual({ connection: 'keep-alive', closed: false });
    // 54 of 60 open (20 + 20 + 13 idle, and this one): every answer now closes its connection.
    await idleConnections('127.0.0.7', 20);
    await idleConnections('127.0.0.8', 20);
    await idleConnections('127.0.0.9', 13);
    expect(await keptAlive()).toEqual({ connection: 'close', closed: true });
    for (const socket of sockets.splice(0)) socket.destroy();
    await sleep(300);
    expect(await keptAlive()).toEqual({ connection: 'keep-alive', closed: false });
  });
});
