import type { CommandStartedEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderDoc } from '../../src/db/documents';
import { connectDatabase, type Database } from '../../src/db/mongo';
import { createOrderRepository, RECENT_WALK, type OrderRepository } from '../../src/db/order-repository';
import { createProductRepository, type ProductRepository } from '../../src/db/product-repository';
import { loadGenerated } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * What the embedded engine (FerretDB 2 + DocumentDB on PostgreSQL) does with every query shape of
 * the repositories, at 20,000 products and 20,000 orders: each command the repository sends is
 * explained, and the PostgreSQL plan FerretDB returns must read through an index (no sequential
 * scan) and, for pages, take its order from the primary key (no sort step). A search of words
 * shorter than a search gram is the known exception: a scan (README, "Search").
 */

const PRODUCTS = 20_000;
const ORDERS = 20_000;
const DATA_COMMANDS = new Set(['find', 'count', 'aggregate']);

let tdb: TestDatabase;
/** A second client on the same database that reports its commands. */
let watched: Database;
let seen: CommandStartedEvent[] = [];
let products: ProductRepository;
let orders: OrderRepository;
let sample: OrderDoc;
/** A customer with a few orders, none among the newest RECENT_WALK. */
let rareCustomer: string;

beforeAll(async () => {
  tdb = await openTestDatabase('plans');
  await loadGenerated(tdb.db, { seed: 5, products: PRODUCTS, orders: ORDERS, batchSize: 5000 });
  watched = await connectDatabase({ uri: tdb.uri, dbName: tdb.dbName, monitorCommands: true });
  watched.client.on('commandStarted', (event) => {
    if (DATA_COMMANDS.has(event.commandName)) seen.push(event);
  });
  products = createProductRepository(watched.db);
  orders = createOrderRepository(watched.db);
  sample = (await tdb.db.collection<OrderDoc>('orders').findOne({ id: ORDERS / 2 }))!;
  const oldest = await tdb.db
    .collection<OrderDoc>('orders')
    .find({}, { projection: { customer_id: 1 } })
    .sort({ _id: 1 })
    .limit(200)
    .toArray();
  const recent = new Set(
    (
      await tdb.db
        .collection<OrderDoc>('orders')
        .find({}, { projection: { customer_id: 1 } })
        .sort({ _id: -1 })
        .limit(RECENT_WALK)
        .toArray()
    ).map((order) => order.customer_id),
  );
  rareCustomer = oldest.find((order) => !recent.has(order.customer_id))!.customer_id;
}, 180_000);

afterAll(async () => {
  await watched?.close();
  await tdb?.close();
});

/** A PostgreSQL plan node, as FerretDB hands it over inside explain's `queryPlanner`. */
interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

interface Explained {
  command: string;
  nodes: PlanNode[];
}

function planNodes(value: unknown, into: PlanNode[] = []): PlanNode[] {
  if (Array.isArray(value)) for (const item of value) planNodes(item, into);
  else if (value && typeof value === 'object') {
    if (typeof (value as PlanNode)['Node Type'] === 'string') into.push(value as PlanNode);
    for (const child of Object.values(value)) planNodes(child, into);
  }
  return into;
}

/** The command as the driver sent it, without the session and transport fields explain refuses. */
function bare(command: Document): Document {
  const { lsid: _l, $db: _d, $clusterTime: _c, $readPreference: _r, ...rest } = command;
  return rest;
}

/** Runs `query` through the repository and explains every data command it sent. */
async function plansOf(query: () => Promise<unknown>): Promise<Explained[]> {
  seen = [];
  await query();
  const commands = seen;
  seen = [];
  expect(commands.length).toBeGreaterThan(0);
  return Promise.all(
    commands.map(async (event) => {
      const reply = await tdb.db.command({ explain: bare(event.command), verbosity: 'queryPlanner' });
      return { command: event.commandName, nodes: planNodes(reply) };
    }),
  );
}

const INDEX_READS = new Set(['Index Scan', 'Index Only Scan', 'Bitmap Index Scan']);
const SORTS = new Set(['Sort', 'Incremental Sort']);

function describePlan(plan: Explained): string {
  return `${plan.command}: ${plan.nodes.map((node) => `${node['Node Type']}${node['Index Name'] ? ` on ${node['Index Name']}` : ''}${node['Index Cond'] ? ` (${node['Index Cond']})` : ''}`).join(' > ')}`;
}

/** Reads through an index, never a sequential scan. */
function expectIndexed(plan: Explained, indexCondMentions?: string): void {
  const types = plan.nodes.map((node) => node['Node Type']);
  expect(types, describePlan(plan)).not.toContain('Seq Scan');
  const reads = plan.nodes.filter((node) => INDEX_READS.has(node['Node Type']));
  expect(reads.length, describePlan(plan)).toBeGreaterThan(0);
  if (indexCondMentions)
    expect(
      reads.some((node) => (node['Index Cond'] ?? '').includes(indexCondMentions)),
      describePlan(plan),
    ).toBe(true);
}

/** A page in index order: an Index Scan (the primary key, in _id order) and no sort step. */
function expectOrderedByIndex(plan: Explained): void {
  expectIndexed(plan);
  expect(
    plan.nodes.some((node) => node['Node Type'] === 'Index Scan'),
    describePlan(plan),
  ).toBe(true);
  expect(
    plan.nodes.filter((node) => SORTS.has(node['Node Type'])),
    describePlan(plan),
  ).toEqual([]);
}

describe('product reads at 20,000 products', () => {
  it('page 1 of the catalogue walks the primary key in order', async () => {
    const [page] = await plansOf(() => products.findPage({ words: [] }, 0, 15));
    expectOrderedByIndex(page!);
  });

  it('a deep page skips along the primary key, in order', async () => {
    const [page] = await plansOf(() => products.findPage({ words: [] }, 15_000, 15));
    expectOrderedByIndex(page!);
  });

  it('a category page and its count use the category index or the primary key, never a scan', async () => {
    const [page] = await plansOf(() => products.findPage({ words: [], category: 'Software' }, 0, 15));
    expectOrderedByIndex(page!);
    const [count] = await plansOf(() => products.count({ words: [], category: 'Software' }));
    expectIndexed(count!, 'category_key');
  });

  it('keyset windows are ranges of the primary key, in order, either way', async () => {
    for (const window of [
      { afterId: 5000, limit: 16, descending: false },
      { beforeId: 5000, limit: 16, descending: true },
    ]) {
      const [plan] = await plansOf(() => products.findWindow({ words: [] }, window));
      expectOrderedByIndex(plan!);
    }
  });

  it('by ids and by variant ids: the primary key and the variant index', async () => {
    const [byIds] = await plansOf(() => products.findByIds([3, 300, 3000]));
    expectIndexed(byIds!);
    const [byVariants] = await plansOf(() => products.findByVariantIds([10_000_003, 10_000_300]));
    expectIndexed(byVariants!, 'variant.id');
  });

  it('a search word of 3 or more characters: count and page read the gram index (issue 20)', async () => {
    const readsGrams = (plan: Explained) =>
      plan.nodes.some((node) => node['Index Name'] === 'search_grams_1');
    // Three probes for products without current grams (the version index), then the count.
    const counted = await plansOf(() => products.count({ words: ['gift'] }));
    for (const plan of counted) expectIndexed(plan);
    expect(counted.filter(readsGrams).length, counted.map(describePlan).join('\n')).toBe(1);
    // A word too rare to fill a page in the walk's budget: the walk, then the gram index.
    const rare = await plansOf(() => products.findPage({ words: ['zzqx'] }, 0, 15));
    for (const plan of rare) expectIndexed(plan);
    expect(rare.filter(readsGrams).length, rare.map(describePlan).join('\n')).toBe(1);
    const window = await plansOf(() =>
      products.findWindow({ words: ['zzqx'] }, { limit: 16, descending: true }),
    );
    expect(window.filter(readsGrams).length, window.map(describePlan).join('\n')).toBe(1);
  });

  it("a common word's first page: the walk of the primary key in order fills it", async () => {
    const plans = await plansOf(() => products.findPage({ words: ['gift'] }, 0, 15));
    for (const plan of plans) expectIndexed(plan);
    expectOrderedByIndex(plans.at(-1)!);
  });

  it('KNOWN SCAN: a search of words shorter than a gram (1-2 characters) reads every product', async () => {
    const [count] = await plansOf(() => products.count({ words: ['tv'] }));
    expect(
      count!.nodes.some((node) => node['Node Type'] === 'Seq Scan'),
      describePlan(count!),
    ).toBe(true);
  });
});

describe('order reads at 20,000 orders', () => {
  it('by ULID: the primary key', async () => {
    const [plan] = await plansOf(() => orders.findByUlid(sample.ulid));
    expectIndexed(plan!);
  });

  it('by ids and by item ids: their indexes', async () => {
    const [byIds] = await plansOf(() => orders.findByIds([sample.id]));
    expectIndexed(byIds!, 'id');
    const [byItems] = await plansOf(() => orders.findByItemIds([sample.items[0]!.id]));
    expectIndexed(byItems!, 'items.id');
  });

  it("a frequent customer's newest orders: a bounded walk of the primary key, in order", async () => {
    // cus_000001 places about a tenth of the orders (seed/generator.ts): the walk fills the page.
    const plans = await plansOf(() =>
      orders.findWindow({ customerId: 'cus_000001' }, { limit: 11, oldestFirst: false }),
    );
    expect(plans.map((plan) => plan.command)).toEqual(['aggregate']);
    expectOrderedByIndex(plans[0]!);
    expect(plans[0]!.nodes.find((node) => node['Node Type'] === 'Index Scan')?.['Index Name']).toBe('_id_');
  });

  it("a rare customer's orders: the walk falls short, then the customer index (sorting only theirs)", async () => {
    const plans = await plansOf(() =>
      orders.findWindow({ customerId: rareCustomer }, { limit: 11, oldestFirst: false }),
    );
    expect(plans.map((plan) => plan.command)).toEqual(['aggregate', 'find']);
    expectIndexed(plans[1]!, 'customer_id');
    const [count] = await plansOf(() => orders.countMatching({ customerId: rareCustomer }));
    expectIndexed(count!, 'customer_id');
  });

  it('every order, newest first, and a date range: the primary key in order', async () => {
    const [all] = await plansOf(() => orders.findWindow({}, { limit: 11, oldestFirst: false }));
    expectOrderedByIndex(all!);
    const [range] = await plansOf(() =>
      orders.findWindow({ createdAfter: sample.created_at }, { limit: 11, oldestFirst: false }),
    );
    expectOrderedByIndex(range!);
  });
});
