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

/** Ten cached operations of 90 products each in one batch: about 1 MB of answer from 9 kB. */
function batchHead(): string {
  const fields =
    'id databaseId name brandId brandName categoryName channel createdAt updatedAt url region ' +
    'discountPercentage isPermanentOutOfStock description shortDescription notes images tags variant { ' +
    'id databaseId name price { amount currency formatted decimal localizedDecimal } ' +
    'faceValue { amount currency formatted decimal localizedDecimal } }';
  const query = `{ products(first: 90) { edges { cursor node { ${fields} } } } }`;
  const body = JSON.stringify(Array.from({ length: 10 }, () => ({ query })));
  return (
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept-Encoding: br\r\n` +
    `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
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

  it('asking for a cached 1 MB batch in br are answered within a byte budget, the rest 503', async () => {
    const head = batchHead();
    // Stored on the first request (retried: on a busy machine the first uncached read may miss its deadline).
    let single = { status: 0, bytes: 0 };
    for (let attempt = 0; attempt < 3 && single.status !== 200; attempt++) {
      single = await exchange(head.replace('Accept-Encoding: br\r\n', ''));
    }
    expect(single.bytes).toBeGreaterThan(900_000);
    const { results, growth } = await allAtOnce(300, head);
    const statuses = results.map(({ status }) => status);
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(10);
    // Before: every answer was built and compressed at once (+700 MB for 200 clients here; 300
    // clients in the issue: 161 MB → 2.7 GB). Now ~250 MB, most of it the heap's own growth.
    expect(growth).toBeLessThan(450);
  }, 60_000);
});
