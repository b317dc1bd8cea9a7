import type { CommandStartedEvent } from 'mongodb';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBackgroundCommand } from '../support/background-commands';
import { startDelayingProxy, type DelayingProxy } from '../support/delaying-proxy';
import { openOutsideWriter, type OutsideWriter } from '../support/outside-writer';
import { describeWithRedis } from '../support/describe-with-redis';
import { startRedis, type TestRedis } from '../support/redis';
import { startTestServer, type TestServer } from '../support/server';

/**
 * A request that read a page before an outside write committed, and stores it after the write's
 * purge: the page must not be kept, and neither the next request nor one that joined the run after
 * the purge answers it. The database's replies are held by a proxy, so the write lands between the
 * page's read and its store however fast the engine is; the server's deadline is long enough for
 * the hold, so the purge a deadline later (which used to drop such a page) cannot come first.
 */

const HOLD_MS = 3_000;

let proxy: DelayingProxy;
let server: TestServer;
let writer: OutsideWriter;
/** Replies held when the server last sent a page's read of products (its list: not a probe, not a count). */
let heldAtListRead: number | undefined;

async function start(env: Record<string, string> = {}): Promise<void> {
  proxy = await startDelayingProxy(inject('mongoUri'));
  server = await startTestServer({
    env: {
      MONGODB_URI: proxy.uri,
      RESPONSE_CACHE_TTL_MS: '600000',
      MONGODB_TIMEOUT_MS: '20000',
      CHANGE_FEED_WAIT_MS: '5000',
      ...env,
    },
  });
  server.database.client.on('commandStarted', (event: CommandStartedEvent) => {
    const { command } = event;
    if (isBackgroundCommand(command)) return;
    const pipeline = JSON.stringify(command.pipeline ?? []);
    if (command.aggregate === 'products' && pipeline.includes('"$limit"')) heldAtListRead = proxy.held;
  });
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
}

async function stop(): Promise<void> {
  await writer?.close();
  await server?.stop();
  await proxy?.close();
}

interface Answer {
  cache: string | null;
  names: string[];
}

const restPage = (category: string, perPage: number) => async (): Promise<Answer> => {
  const response = await server.request(
    `/api/v1/products?category=${encodeURIComponent(category)}&per_page=${perPage}`,
  );
  const body = (await response.json()) as { data: { name: string }[] };
  return { cache: response.headers.get('x-cache'), names: body.data.map((product) => product.name) };
};

const graphqlPage = (category: string, perPage: number) => async (): Promise<Answer> => {
  const response = await server.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      query: `{ productPage(category: ${JSON.stringify(category)}, perPage: ${perPage}) { total items { databaseId name } } }`,
    }),
  });
  const body = (await response.json()) as { data: { productPage: { items: { name: string }[] } } };
  return {
    cache: response.headers.get('x-cache'),
    names: body.data.productPage.items.map((item) => item.name),
  };
};

async function until(what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const pages = [
  { api: 'REST', page: restPage, category: 'Gift Cards', other: 'Software' },
  { api: 'GraphQL', page: graphqlPage, category: 'Gift Cards', other: 'Software' },
];

describe('a page read before a change and stored after its purge, caches in the process', () => {
  beforeAll(() => start());
  afterAll(stop);
  it.each(pages)('$api: is not kept', notKept);
});

describeWithRedis('a page read before a change and stored after its purge, caches in Redis', () => {
  let redis: TestRedis | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    await start({ REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await stop();
    await redis?.stop();
  });
  it.each(pages)('$api: is not kept', notKept);
});

/** Not kept: the next request, and one that joined its run after the purge, answer the change. */
async function notKept({ page, category, other }: (typeof pages)[number]): Promise<void> {
  const read = page(category, 2);
  // Another page, cached: a lookup of it waits for the feed to hand on (and purge) every write
  // committed before it, and answers without the database.
  const elsewhere = page(other, 2);
  await elsewhere();
  expect((await elsewhere()).cache).toBe('HIT');
  // The filter's total is kept (by another page of it), so the page's only read is its list.
  await page(category, 3)();
  const product = await writer.products.findOne(
    { category_key: category.toLowerCase() },
    { sort: { _id: 1 } },
  );
  const old = (
    await writer.products.find({ category_key: category.toLowerCase() }).sort({ _id: 1 }).limit(2).toArray()
  ).map((doc) => doc.name as string);

  proxy.delayMs = HOLD_MS;
  heldAtListRead = undefined;
  const first = read();
  // The list's read was sent, and the database has answered it: its reply is held, the documents
  // as they were before the write below.
  await until('the page is read', () => heldAtListRead !== undefined && proxy.held > heldAtListRead, 10_000);
  const renamed = `Renamed ${Date.now()}`;
  await writer.products.updateOne({ _id: product!._id }, { $set: { name: renamed } });
  // The feed has handed the rename on, so its purge is done; the page's reply is still held.
  expect((await elsewhere()).cache).toBe('HIT');
  const joined = read();
  proxy.delayMs = 0;

  // The request begun before the write may answer the state before it: it did (the race is real).
  expect((await first).names).toEqual(old);
  const joinedAnswer = await joined;
  const next = await read();
  expect({ joined: joinedAnswer.names, next: next.names }).toEqual({
    joined: expect.arrayContaining([renamed]) as unknown,
    next: expect.arrayContaining([renamed]) as unknown,
  });
  // And it is stored once read again.
  expect(await read()).toEqual({ cache: 'HIT', names: next.names });
}
