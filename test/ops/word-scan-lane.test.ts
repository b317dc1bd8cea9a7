import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { productFilter } from '../../src/db/catalog/product-plans';
import { isWordScan } from '../../src/db/guards/query-lanes';
import { openOutsideWriter, productLike, type OutsideWriter } from '../support/outside-writer';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 36, row 12: a search of 1–2-character words has no grams, so each page and total reads
 * every product. They shared the lane of ordinary pages (8 at once per process), so one client's
 * short searches held 0.44 of a database core at 100,000 products. Now they wait in a lane of
 * their own (`MONGODB_MAX_CONCURRENT_WORD_SCANS`, 1): however many clients ask, one such read is
 * in the database at a time per process, and ordinary pages keep their turns.
 */

let server: TestServer;
let writer: OutsideWriter;
/** Short-word reads in the database now, and the most seen at once. */
let inFlight = new Set<number>();
let most = 0;
/** When each short-word read began, and how long each took in the database, [start, ms]. */
const began = new Map<number, number>();
let reads: [number, number][] = [];

/** A read whose `$regex`es are all 1–2 characters (the escaped word is what the filter holds). */
function isShortWordRead(command: Document): boolean {
  const text = JSON.stringify(command.pipeline ?? command.filter ?? command.query ?? {});
  const regexes = [...text.matchAll(/"\$regex":"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!);
  return regexes.length > 0 && regexes.every((pattern) => pattern.replace(/\\\\/g, '').length <= 2);
}

beforeAll(async () => {
  server = await startTestServer({ env: { MONGODB_MAX_QUEUED_QUERIES: '1000' } });
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
  const client = server.database.client;
  client.on('commandStarted', (event: CommandStartedEvent) => {
    if (event.commandName === 'getMore' || !isShortWordRead(event.command)) return;
    inFlight.add(event.requestId);
    most = Math.max(most, inFlight.size);
    began.set(event.requestId, performance.now());
  });
  const done = (event: CommandSucceededEvent | CommandFailedEvent) => {
    inFlight.delete(event.requestId);
    const start = began.get(event.requestId);
    began.delete(event.requestId);
    if (start !== undefined) reads.push([start, performance.now() - start]);
  };
  client.on('commandSucceeded', done);
  client.on('commandFailed', done);
});
afterAll(async () => {
  await writer?.close();
  await server?.stop();
});

async function restSearch(term: string) {
  const response = await server.request(
    `/api/v1/products/search?term=${encodeURIComponent(term)}&per_page=5`,
  );
  const body = response.status === 200 ? ((await response.json()) as { meta: { total: number } }) : undefined;
  return { status: response.status, total: body?.meta.total };
}

describe('searches of 1–2-character words', () => {
  it('are the word scans, and only they', () => {
    expect(isWordScan(criteriaFor('a', undefined))).toBe(true);
    expect(isWordScan(criteriaFor('a b', undefined))).toBe(true);
    expect(isWordScan(criteriaFor('a gift', undefined))).toBe(false);
    expect(isWordScan(criteriaFor('', undefined))).toBe(false);
    expect(isWordScan(criteriaFor(undefined, 'Gift Cards'))).toBe(false);
  });

  it('run one at a time per process, however many clients ask; ordinary pages keep answering', async () => {
    inFlight = new Set();
    most = 0;
    const terms = ['a', 'e', 'g', 'i', 'o', 'r', 's', 't', 'ca', 'ar', 'de', 'gi', 'in', 'on', 'er', 'st'];
    const [short, pages] = await Promise.all([
      Promise.all([...terms, ...terms].map((term) => restSearch(term))),
      Promise.all(
        Array.from({ length: 10 }, async () => (await server.request('/api/v1/products?per_page=5')).status),
      ),
    ]);
    expect(pages.every((status) => status === 200)).toBe(true);
    expect(most).toBe(1);
    // Exact: each answered total is the independent scan's.
    for (const [index, answer] of short.entries()) {
      if (answer.status !== 200) continue;
      const term = [...terms, ...terms][index]!;
      const scanned = await writer.products.countDocuments(
        productFilter(criteriaFor(term, undefined)) as Document,
      );
      expect(answer.total).toBe(scanned);
    }
    expect(short.filter((answer) => answer.status === 200).length).toBeGreaterThan(0);
  });

  it('hold the database at most MONGODB_WORD_SCAN_BUSY_PERCENT (30) of the time, however fast a client asks', async () => {
    // Enough products that a scan, not the HTTP round trip, is what a request costs.
    const template = (await writer.products.findOne({}))!;
    for (let batch = 0; batch < 10; batch++)
      await writer.products.insertMany(
        Array.from({ length: 2_000 }, (_, n) =>
          productLike(template, 900_000 + batch * 2_000 + n, 'Lane Filler'),
        ) as never[],
      );
    reads = [];
    const until = performance.now() + 4_000;
    const statuses: number[] = [];
    const retryAfter = new Set<string | null>();
    let firstRefusal = Infinity;
    // One client, 4 connections, asking again as soon as it is answered.
    await Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        for (let n = 0; performance.now() < until; n++) {
          const response = await server.request(`/api/v1/products/search?term=${'aeiou'[(lane + n) % 5]}`);
          await response.arrayBuffer();
          statuses.push(response.status);
          if (response.status !== 503) continue;
          retryAfter.add(response.headers.get('retry-after'));
          firstRefusal = Math.min(firstRefusal, performance.now());
        }
      }),
    );
    // Past the lane's burst (a second of scans, spent at once), from its first refusal on.
    const steady = reads.filter(([start]) => start >= firstRefusal);
    const last = Math.max(...steady.map(([start, ms]) => start + ms));
    const busy = steady.reduce((sum, [, ms]) => sum + ms, 0);
    expect(steady.length).toBeGreaterThan(2);
    expect(busy / (last - firstRefusal)).toBeLessThanOrEqual(0.35);
    expect(new Set(statuses)).toEqual(new Set([200, 503]));
    expect([...retryAfter].every((value) => Number(value) >= 1)).toBe(true);
  });
});
