import type { Document } from 'mongodb';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FILTER_TAGS_KEY } from '../../src/store/response-store';
import { describeWithRedis } from '../support/describe-with-redis';
import { openOutsideWriter, productLike, type OutsideWriter } from '../support/outside-writer';
import { sharedStoreIs } from '../support/processes';
import { startServerOnRedis } from '../support/redis';
import type { TestServer } from '../support/server';

/**
 * In the shared store, entries carry the filters they read (`list:…`), and the store lists the
 * filter tags in use, so a change from the log purges the entries of the filters it moves a
 * product in or out of, on every instance, and keeps the others.
 */
let fixture: Awaited<ReturnType<typeof startServerOnRedis>> | undefined;
let server: TestServer;
let inspect: Redis;
let writer: OutsideWriter;
const word = () => `ftg${Math.random().toString(36).slice(2, 9)}`;

beforeAll(async () => {
  fixture = await startServerOnRedis({ RESPONSE_CACHE_TTL_MS: '600000' });
  ({ server, inspect } = fixture);
  expect(await sharedStoreIs(true, [server])).toBe(true);
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
});

afterAll(async () => {
  await writer?.close();
  await fixture?.stop();
});

const cacheOf = async (term: string) => {
  const response = await server.request(`/api/v1/products/search?term=${term}`);
  await response.arrayBuffer();
  return response.headers.get('x-cache');
};

describeWithRedis('filter tags in the shared store', () => {
  it('purge the searches a rename moves a product in or out of, and keep the others', async () => {
    const [from, to, other] = [word(), word(), word()];
    const template = (await writer.products.findOne({}))!;
    await writer.products.insertMany([
      productLike(template, 910_001, 'gift cards', { name: `${from} one` }),
      productLike(template, 910_002, 'gift cards', { name: `${other} two` }),
    ]);
    for (const term of [from, to, other]) await cacheOf(term);
    // Entries are written in the background: let the last write land.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await Promise.all([from, to, other].map(cacheOf))).toEqual(['HIT', 'HIT', 'HIT']);
    const listed = await inspect.zrange(FILTER_TAGS_KEY, 0, -1);
    for (const term of [from, to, other]) expect(listed).toContain(`list:${JSON.stringify([null, [term]])}`);
    await writer.products.updateOne({ _id: 910_001 } as Document, { $set: { name: `${to} one` } });
    expect(await Promise.all([from, to, other].map(cacheOf))).toEqual(['MISS', 'MISS', 'HIT']);
  });
});
