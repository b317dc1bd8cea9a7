import type { AddressInfo } from 'node:net';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMemoryMongo } from '../../bench/memory-mongo';
import { connectDatabase, ensureIndexes, type Database } from '../../src/db/mongo';
import { createOrderRepository, type OrderRepository } from '../../src/db/order-repository';
import { createProductRepository, type ProductRepository } from '../../src/db/product-repository';
import { FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * The bench runs on bench/memory-mongo.ts, an in-memory stand-in for MongoDB. It is checked, not
 * trusted: every repository query runs on the fixtures against it and against the embedded FerretDB
 * (a real engine behind the official driver), and the answers must be identical.
 */

interface Repositories {
  products: ProductRepository;
  orders: OrderRepository;
}

let ferret: TestDatabase;
let standIn: Database;
let standInServer: Server;
const engines: Record<'ferretdb' | 'stand-in', Repositories> = {} as never;

beforeAll(async () => {
  ferret = await openTestDatabase('stand_in');
  await loadFixtures(ferret.db);
  const memory = await startMemoryMongo({ port: 0 });
  standInServer = memory.server;
  standIn = await connectDatabase({
    uri: `mongodb://127.0.0.1:${(memory.server.address() as AddressInfo).port}/?directConnection=true`,
    dbName: 'stand_in',
  });
  await ensureIndexes(standIn.db);
  await loadFixtures(standIn.db);
  for (const [name, db] of [
    ['ferretdb', ferret.db],
    ['stand-in', standIn.db],
  ] as const) {
    engines[name] = {
      products: createProductRepository(db, { maxTimeMS: 5_000 }),
      orders: createOrderRepository(db, { maxTimeMS: 5_000 }),
    };
  }
});

afterAll(async () => {
  await standIn?.close();
  standInServer?.close();
  await ferret?.close();
});

const alice = FIXTURE_ORDERS.filter((order) => order.customer_id === 'cus_alice').map((order) => order.ulid);
const newest = [...alice].sort().reverse();
const variantIds = FIXTURE_PRODUCTS.slice(0, 4).map((product) => product.variant.id);
const itemIds = FIXTURE_ORDERS.slice(0, 3).flatMap((order) => order.items.map((item) => item.id));

/** Every query the repositories send, with the arguments the APIs use (and edge cases). */
const QUERIES: Record<string, (repositories: Repositories) => Promise<unknown>> = {
  'products.count all': ({ products }) => products.count({ words: [] }),
  'products.count one word': ({ products }) => products.count({ words: ['gift'] }),
  'products.count two words': ({ products }) => products.count({ words: ['card', 'usd'] }),
  'products.count literal symbols': ({ products }) => products.count({ words: ['.*', '('] }),
  'products.count category': ({ products }) => products.count({ words: [], category: 'gift cards' }),
  'products.count category + word': ({ products }) =>
    products.count({ words: ['card'], category: 'Gift Cards' }),
  'products.findPage first': ({ products }) => products.findPage({ words: [] }, 0, 5),
  'products.findPage middle': ({ products }) => products.findPage({ words: [] }, 5, 5),
  'products.findPage past the end': ({ products }) => products.findPage({ words: [] }, 100, 5),
  'products.findPage search': ({ products }) => products.findPage({ words: ['card'] }, 2, 3),
  'products.findPage category': ({ products }) =>
    products.findPage({ words: [], category: 'Software' }, 0, 15),
  'products.findWindow first': ({ products }) =>
    products.findWindow({ words: [] }, { limit: 4, descending: false }),
  'products.findWindow after': ({ products }) =>
    products.findWindow({ words: [] }, { afterId: 7, limit: 4, descending: false }),
  'products.findWindow last before': ({ products }) =>
    products.findWindow({ words: [] }, { beforeId: 12, limit: 3, descending: true }),
  'products.findWindow between': ({ products }) =>
    products.findWindow({ words: ['card'] }, { afterId: 2, beforeId: 18, limit: 10, descending: false }),
  'products.countByCategory': ({ products }) => products.countByCategory(),
  'products.countByBrand': ({ products }) => products.countByBrand(),
  'products.findByIds': ({ products }) => products.findByIds([3, 1, 20, 999]),
  'products.findByVariantIds': ({ products }) => products.findByVariantIds([...variantIds, 999_999]),
  'orders.findByUlid': ({ orders }) => orders.findByUlid(alice[0]!),
  'orders.findByUlid unknown': ({ orders }) => orders.findByUlid('01ARZ3NDEKTSV4RRFFQ69G5FAV'),
  'orders.findByIds': ({ orders }) => orders.findByIds([1, 2, 3, 999]),
  'orders.findByItemIds': ({ orders }) => orders.findByItemIds([...itemIds, 999_999]),
  'orders.count': ({ orders }) => orders.count(),
  'orders.findWindow all newest first': ({ orders }) =>
    orders.findWindow({}, { limit: 5, oldestFirst: false }),
  'orders.findWindow customer': ({ orders }) =>
    orders.findWindow({ customerId: 'cus_alice' }, { limit: 4, oldestFirst: false }),
  'orders.findWindow customer after': ({ orders }) =>
    orders.findWindow({ customerId: 'cus_alice' }, { afterUlid: newest[3], limit: 4, oldestFirst: false }),
  'orders.findWindow customer oldest first before': ({ orders }) =>
    orders.findWindow({ customerId: 'cus_alice' }, { beforeUlid: newest[2], limit: 3, oldestFirst: true }),
  'orders.findWindow statuses': ({ orders }) =>
    orders.findWindow(
      { paymentStatuses: ['completed'], fulfillmentStatuses: ['completed', 'refunded'] },
      { limit: 20, oldestFirst: false },
    ),
  'orders.findWindow currency': ({ orders }) =>
    orders.findWindow({ currency: 'EUR' }, { limit: 20, oldestFirst: false }),
  'orders.findWindow dates': ({ orders }) =>
    orders.findWindow(
      { createdAfter: new Date('2026-02-01T00:00:00Z'), createdBefore: new Date('2026-05-01T00:00:00Z') },
      { limit: 20, oldestFirst: false },
    ),
  'orders.countMatching customer + status': ({ orders }) =>
    orders.countMatching({ customerId: 'cus_alice', paymentStatuses: ['pending'] }),
  'orders.countMatching dates': ({ orders }) =>
    orders.countMatching({ createdAfter: new Date('2026-03-01T00:00:00Z') }),
};

const UNORDERED = new Set([
  'products.findByIds',
  'products.findByVariantIds',
  'orders.findByIds',
  'orders.findByItemIds',
]);
const byId = (documents: unknown) => [...(documents as { id: number }[])].sort((a, b) => a.id - b.id);

describe('the bench database stand-in answers every repository query as FerretDB does', () => {
  it.each(Object.keys(QUERIES))('%s', async (name) => {
    const query = QUERIES[name]!;
    const [real, standInAnswer] = await Promise.all([query(engines.ferretdb), query(engines['stand-in'])]);
    // Lookups by a list of ids send no sort: MongoDB promises no order, and callers map by id.
    expect(UNORDERED.has(name) ? byId(standInAnswer) : standInAnswer).toEqual(
      UNORDERED.has(name) ? byId(real) : real,
    );
  });

  it('is asked questions with real answers (not only empty ones)', async () => {
    const sizes = await Promise.all(
      Object.values(QUERIES).map(async (query) => {
        const answer = await query(engines.ferretdb);
        return Array.isArray(answer) ? answer.length : answer === null ? 0 : 1;
      }),
    );
    expect(sizes.filter((size) => size > 0).length).toBeGreaterThan(Object.keys(QUERIES).length - 5);
  });
});
