import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGenerated } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { listeningUrl, rssMb, serverProcessEnv, spawnServer, stopProcess } from '../support/processes';

/**
 * Many clients at once asking for answers the server builds in memory (issue 28 rows 5 and 6):
 * what is built at once is bounded, so memory stays put. A real server process; memory from /proc.
 */

let testDb: TestDatabase;
let child: ChildProcessWithoutNullStreams;
let port: number;

beforeAll(async () => {
  testDb = await openTestDatabase('parallel-builds');
  await loadGenerated(testDb.db, { seed: 1, products: 200, orders: 0 });
  child = spawnServer(serverProcessEnv(testDb, { RESPONSE_CACHE_TTL_MS: '600000', REQUEST_LOG: 'off' }));
  port = Number(new URL(await listeningUrl(child)).port);
}, 120_000);

afterAll(async () => {
  await stopProcess(child);
  await testDb?.close();
});

/** One request on its own socket, read to the end; resolves with the status and the bytes read. */
function exchange(head: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let bytes = 0;
    let first = '';
    socket.on('data', (chunk: Buffer) => {
      if (bytes === 0) first = chunk.toString('latin1', 0, 12);
      bytes += chunk.length;
    });
    socket.on('close', () => resolve({ status: Number(first.slice(9, 12)), bytes }));
    socket.on('error', () => undefined);
    socket.setTimeout(30_000, () => socket.destroy());
    socket.write(head);
  });
}

/** Runs `count` exchanges at once and returns their results and the peak RSS growth (MB) meanwhile. */
async function allAtOnce(count: number, head: string) {
  const before = rssMb(child.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(child.pid))), 100);
  try {
    const results = await Promise.all(Array.from({ length: count }, () => exchange(head)));
    peak = Math.max(peak, rssMb(child.pid));
    return { results, growth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

const get = (path: string, headers = '') =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`;

describe('clients at once', () => {
  it('asking for the 1.7 MB docs bundle in br share one compressed copy', async () => {
    const head = get('/docs/assets/swagger-ui-bundle.js', 'Accept-Encoding: br\r\n');
    const { results, growth } = await allAtOnce(200, head);
    expect(results.every(({ status }) => status === 200)).toBe(true);
    // Compressed: about 460 kB each, not 1.7 MB.
    expect(Math.max(...results.map(({ bytes }) => bytes))).toBeLessThan(600_000);
    // Before: each compressed it anew (300 clients: 130 MB → 4.35 GB in the issue).
    expect(growth).toBeLessThan(250);
  }, 60_000);
});
