import { get } from 'node:http';
import { Kind, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHIQL_DEFAULT_QUERY } from '../../src/graphiql';
import { startTestServer, type TestServer } from '../support/server';

describe('GraphiQL’s default document', () => {
  it('holds one operation, so Run runs it without an operation picker', () => {
    const operations = parse(GRAPHIQL_DEFAULT_QUERY).definitions.filter(
      (definition) => definition.kind === Kind.OPERATION_DEFINITION,
    );
    expect(operations).toHaveLength(1);
  });

  it('has lines that fit the editor at 1280 px (48 characters)', () => {
    for (const line of GRAPHIQL_DEFAULT_QUERY.split('\n')) expect(line.length).toBeLessThanOrEqual(48);
  });
});

describe('GraphiQL’s page', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  /** The bytes as sent (fetch would spend the CPU measured here on decompressing them). */
  const load = (encoding: string) =>
    new Promise<Buffer>((resolve, reject) => {
      get(
        `${server.url}/graphql`,
        { headers: { accept: 'text/html', 'accept-encoding': encoding } },
        (res) => {
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-encoding']).toBe(encoding);
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks)));
        },
      ).on('error', reject);
    });

  it('is built and compressed once per process: later loads cost next to no CPU', async () => {
    const first = await load('br');
    await load('gzip');
    const cpu = process.cpuUsage();
    for (let index = 0; index < 4; index++) {
      expect((await load('br')).equals(first)).toBe(true);
      await load('gzip');
    }
    const { user, system } = process.cpuUsage(cpu);
    // Before: each load rendered and compressed the 9 MB page anew (≈ 0.33 CPU-s; 8 loads ≈ 2.6 s).
    expect((user + system) / 1e6).toBeLessThan(0.8);
  }, 60_000);
});
