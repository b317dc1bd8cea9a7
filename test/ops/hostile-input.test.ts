import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { listeningUrl, serverProcessEnv, spawnServer } from '../support/processes';

/**
 * A real server process under hostile input, its memory read from /proc: amplifying queries and
 * oversized bodies must leave it where it was. Loops are bounded in count; loopback only.
 */

let testDb: TestDatabase;
let child: ChildProcessWithoutNullStreams;
let url: string;

beforeAll(async () => {
  testDb = await openTestDatabase('hostile');
  await loadFixtures(testDb.db);
  child = spawnServer(
    serverProcessEnv(testDb, {
      RESPONSE_CACHE_TTL_MS: '600000',
      RESPONSE_CACHE_MAX_BYTES: '4194304',
    }),
  );
  url = await listeningUrl(child);
});

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await testDb.close();
});

const rssMb = () =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024;
const productId = (index: number) =>
  Buffer.from(`Product:${FIXTURE_PRODUCTS[index % FIXTURE_PRODUCTS.length]!.id}`).toString('base64url');

const FIELDS = `... on Product { id name description shortDescription notes images tags
  variant { name price { formatted decimal } faceValue { formatted } } }`;

async function nodes(count: number, offset: number): Promise<{ status: number; bytes: number }> {
  const ids = Array.from({ length: count }, (_, index) => productId(index + offset));
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `query ($ids: [ID!]!) { nodes(ids: $ids) { ${FIELDS} } }`,
      variables: { ids },
    }),
  });
  return { status: response.status, bytes: (await response.arrayBuffer()).byteLength };
}

/** Runs `total` calls, `concurrency` at a time, and returns the largest RSS growth seen (MB). */
async function rssGrowthDuring(
  total: number,
  concurrency: number,
  call: (index: number) => Promise<unknown>,
) {
  const before = rssMb();
  let peak = before;
  for (let index = 0; index < total; index += concurrency) {
    await Promise.all(Array.from({ length: concurrency }, (_, offset) => call(index + offset)));
    peak = Math.max(peak, rssMb());
  }
  return peak - before;
}

describe('nodes(ids:) amplification', () => {
  it('answers 5,500-ID requests with a small error, and memory stays put', async () => {
    // Warm up at the measured concurrency: compiling the document, filling the pool and the heap's
    // first growth under four parallel 88 kB parses are not what this measures (they alone came to
    // ~100 MB on a busy machine, failing the budget now and then).
    await Promise.all([0, 1, 2, 3].map((offset) => nodes(5_500, offset)));
    const sizes: number[] = [];
    const growth = await rssGrowthDuring(60, 4, async (index) => {
      const { status, bytes } = await nodes(5_500, index);
      expect(status).toBe(200);
      sizes.push(bytes);
    });
    expect(Math.max(...sizes)).toBeLessThan(1_000);
    // Before the cap: 3.3 MB per response and every one cached (200 requests: 155 MB → 3 GB, about
    // 14 MB a request). Now 60 refused requests leave 100–105 MB of uncollected garbage at the peak
    // on a busy machine (back to the start 30 s later), so 100 was the noise floor itself.
    expect(growth).toBeLessThan(150);
  }, 120_000);

  it('keeps the cache within its byte budget for distinct allowed requests', async () => {
    const growth = await rssGrowthDuring(120, 4, async (index) => {
      const { status, bytes } = await nodes(100, index);
      expect(status).toBe(200);
      expect(bytes).toBeGreaterThan(20_000);
    });
    expect(growth).toBeLessThan(100);
  }, 120_000);
});

interface Answer {
  status?: number;
  connection?: string;
  body?: string;
  error?: string;
}

/** Streams `megabytes` of JSON without Content-Length (chunked), as a client that keeps writing. */
function chunkedPost(path: string, megabytes: number): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      `${url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code }));
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    req.write('{"query":"{ __typename }","variables":{"pad":"');
    const pump = () => {
      while (sent < megabytes * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end('"}}');
    };
    pump();
  });
}

describe('oversized bodies', () => {
  it.each(['/graphql', '/api/v1/products'])(
    'answers chunked 5 MB bodies to %s with 413 and Connection: close, memory flat',
    async (path) => {
      const answers: Answer[] = [];
      // Warm up with one round at the measured concurrency (first sockets, buffers, heap growth).
      await Promise.all(Array.from({ length: 10 }, () => chunkedPost(path, 5)));
      const growth = await rssGrowthDuring(20, 10, async () => answers.push(await chunkedPost(path, 5)));
      for (const answer of answers) {
        expect(answer).toEqual({
          status: 413,
          connection: 'close',
          body: JSON.stringify({ message: 'The request body must not be larger than 102400 bytes.' }),
        });
      }
      // Buffered whole before: 20 concurrent 5 MB bodies took a server from 145 to 401 MB (the
      // issue's reproduction). Streamed and dropped now; what is left is the client's own buffers
      // and garbage (35-55 MB seen on Node 24 on a busy machine).
      expect(growth).toBeLessThan(80);
    },
    60_000,
  );

  it('still reads a chunked body within the limit', async () => {
    const response = await new Promise<Answer>((resolve) => {
      const req = request(
        `${url}/graphql`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode, body }));
        },
      );
      req.write('{"query":"{ __typename }",');
      req.end('"variables":{}}');
    });
    expect(response).toEqual({ status: 200, body: '{"data":{"__typename":"Query"}}' });
  });

  it('refuses a declared Content-Length over the limit before reading it', async () => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(200_000) } }),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
  });

  it('refuses a Host header that is not a host', async () => {
    const status = await new Promise<number | undefined>((resolve) => {
      const req = request(
        `${url}/api/v1/products`,
        { headers: { host: `${'a'.repeat(300)}/x?y` } },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.end();
    });
    expect(status).toBe(400);
  });
});
