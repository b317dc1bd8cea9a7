/**
 * The attacks of issue 21 row 5 and the time to recover from them, shared by the regression
 * tests (test/ops/admission.test.ts) and the figures (bench/attacks.ts).
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Target {
  origin: string;
  orderPath: string;
  token: string;
}

/** Searches for words that occur nowhere: every product is scanned, nothing is cached. */
let searchCounter = 0;
export const uniqueTerm = () => `zq${Date.now().toString(36)}${(searchCounter++).toString(36)}`;

export async function probe(url: string, headers: Record<string, string> = {}): Promise<number> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

export async function healthy(target: Target): Promise<boolean> {
  const [ready, order] = await Promise.all([
    probe(`${target.origin}/readyz`),
    probe(`${target.origin}${target.orderPath}`, { authorization: `Bearer ${target.token}` }),
  ]);
  return ready === 200 && order === 200;
}

/** Seconds from now until three probes in a row succeed (capped at `limitS`). */
export async function timeToRecover(target: Target, limitS = 300): Promise<number> {
  const started = performance.now();
  let streak = 0;
  let firstOfStreak = 0;
  while ((performance.now() - started) / 1000 < limitS) {
    const at = performance.now();
    if (await healthy(target)) {
      if (streak++ === 0) firstOfStreak = at;
      if (streak === 3) return Math.max(0, (firstOfStreak - started) / 1000);
    } else streak = 0;
    await sleep(Math.max(0, 200 - (performance.now() - at)));
  }
  return limitS;
}

/** Row 5a: 40 requests of 20 aliased unfiltered-scan searches with totalCount; the client leaves after 1 s. */
export async function aliasAttack(target: Target): Promise<void> {
  const aliases = Array.from(
    { length: 20 },
    (_, i) => `a${i}: products(first: 1, search: "${uniqueTerm()}") { totalCount }`,
  );
  const body = JSON.stringify({ query: `{ ${aliases.join(' ')} }` });
  const controller = new AbortController();
  const requests = Array.from({ length: 40 }, () =>
    fetch(`${target.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: controller.signal,
    })
      .then((response) => response.arrayBuffer())
      .catch(() => undefined),
  );
  await sleep(1_000);
  controller.abort();
  await Promise.all(requests);
}

function rawConnection(origin: string): Promise<net.Socket> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

const searchRequest = (host: string) =>
  `GET /api/v1/products/search?term=${uniqueTerm()}&per_page=100 HTTP/1.1\r\nHost: ${host}\r\n\r\n`;

/** Row 5b: 200 pipelined searches on one connection, closed after 0.5 s. */
export async function pipelineAttack(target: Target): Promise<void> {
  const socket = await rawConnection(target.origin);
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  const host = new URL(target.origin).host;
  socket.write(Array.from({ length: 200 }, () => searchRequest(host)).join(''));
  await sleep(500);
  socket.destroy();
}

/** Row 5c: 400 connections, each sends a search and is reset 100 ms later. */
export async function resetAttack(target: Target): Promise<void> {
  const host = new URL(target.origin).host;
  const sockets = await Promise.all(
    Array.from({ length: 400 }, () => rawConnection(target.origin).catch(() => undefined)),
  );
  for (const socket of sockets) {
    socket?.on('error', () => undefined);
    socket?.write(searchRequest(host));
  }
  await sleep(100);
  for (const socket of sockets) socket?.resetAndDestroy();
}
