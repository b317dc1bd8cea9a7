import type { CommandStartedEvent, Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBackgroundCommand } from '../support/background-commands';
import type { OrderDoc } from '../../src/db/documents';
import { connectDatabase, type Database } from '../../src/db/mongo';
import {
  createOrderRepository,
  RECENT_WALK,
  type OrderRepository,
} from '../../src/db/orders/order-repository';
import { createProductRepository, type ProductRepository } from '../../src/db/catalog/product-repository';
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
  await statisticsArrived();
  watched = await connectDatabase({ uri: tdb.uri, dbName: tdb.dbName, monitorCommands: true });
  watched.client.on('commandStarted', (event) => {
    if (DATA_COMMANDS.has(event.commandName) && !isBackgroundCommand(event.command)) seen.push(event);
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
}, 300_000);

/**
 * Waits for autovacuum to analyse and vacuum the freshly loaded collections: until then the
 * planner believes each holds about a thousand rows and plans as for a tiny table (bitmap scans
 * and sorts everywhere). A database in service has current statistics; so must this one.
 */
async function statisticsArrived(): Promise<void> {
  const deadline = Date.now() + 150_000;
  for (const collection of ['products', 'orders']) {
    for (;;) {
      const reply = await tdb.db.command({
        explain: { count: collection, query: {} },
        verbosity: 'queryPlanner',
      });
      const estimate = Math.max(...planNodes(reply).map((node) => node['Plan Rows'] ?? 0));
      if (estimate >= 10_000) break;
      if (Date.now() > deadline)
        throw new Error(`no statistics for ${collection} after 150 s: ${JSON.stringify(reply)}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

afterAll(async () => {
  await watched?.close();
  await tdb?.close();
});

/** A PostgreSQL plan node, as FerretDB hands it over inside explain's `queryPlanner`. */
interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Plan Rows'?: number;
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

/** Only the collection's own shard key: an index read that visits every document. */
const WHOLE_COLLECTION = /^\(shard_key_value = '\d+'::bigint\)$/;

/**
 * Reads through `index` (a MongoDB index name, as FerretDB reports it), never a sequential scan
 * nor a bitmap of the whole collection.
 */
function expectIndexed(plan: Explained, index: string): void {
  const types = plan.nodes.map((node) => node['Node Type']);
  expect(types, describePlan(plan)).not.toContain('Seq Scan');
  const reads = plan.nodes.filter((node) => INDEX_READS.has(node['Node Type']));
  expect(
    reads.filter(
      (node) => node['Node Type'] === 'Bitmap Index Scan' && WHOLE_COLLECTION.test(node['Index Cond'] ?? ''),
    ),
    describePlan(plan),
  ).toEqual([]);
  expect(
    reads.map((node) => node['Index Name']),
    describePlan(plan),
  ).toContain(index);
}

/** A page in index order: a Limit over a walk of the primary key, and no sort step. */
function expectOrderedByIndex(plan: Explained): void {
  expectIndexed(plan, '_id_');
  expect(
    plan.nodes.some((node) => node['Node Type'] === 'Index Scan' && node['Index Name'] === '_id_'),
    describePlan(plan),
  ).toBe(true);
  expect(
    plan.nodes.some((node) => node['Node Type'] === 'Limit'),
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

  it('a category page walks the primary key in order (filtering); its count reads the category index', async () => {
    // The first page of a category asks its key once (src/db/catalog/category-probe.ts): an index lookup.
    const [probe, page] = await plansOf(() => products.findPage({ words: [], category: 'Software' }, 0, 15));
    expectIndexed(probe!, 'category_key_1');
    expectOrderedByIndex(page!);
    const [count] = await plansOf(() => products.count({ words: [], category: 'Software' }));
    expectIndexed(count!, 'category_key_1');
  });

  it('a category no product has: one lookup of its key, no page read (issue 36, row 11)', async () => {
    const plans = await plansOf(() => products.findPage({ words: [], category: 'No Such Category' }, 0, 15));
    expect(plans).toHaveLength(1);
    expectIndexed(plans[0]!, 'category_key_1');
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
    expectIndexed(byIds!, '_id_');
    const [byVariants] = await plansOf(() => products.findByVariantIds([10_000_003, 10_000_300]));
    expectIndexed(byVariants!, 'variant.id_1');
  });

  it('a search word of 3 or more characters: count and page read the gram index (issue 20)', async () => {
    // The count: the gram index, the regexes testing its candidates.
    const [count] = await plansOf(() => products.count({ words: ['gift'] }));
    expectIndexed(count!, 'search_grams_1');
    // A word the grams' sample says is too rare to fill a page in the walk's budget: no walk.
    const rare = await plansOf(() => products.findPage({ words: ['zzqx'] }, 0, 15));
    expect(rare).toHaveLength(1);
    expectIndexed(rare[0]!, 'search_grams_1');
    const window = await plansOf(() =>
      products.findWindow({ words: ['zzqx'] }, { limit: 16, descending: true }),
    );
    expectIndexed(window.at(-1)!, 'search_grams_1');
  });

  it("a common word's count reads one of its grams: the others select the same products", async () => {
    seen = [];
    await products.count({ words: ['software'] });
    const counts = seen.filter((event) => event.commandName !== 'find');
    expect(counts).toHaveLength(1);
    expect(JSON.stringify(counts[0]!.command)).toMatch(/"search_grams":\{"\$all":\["[^"]+"\]\}/);
  });

  it("a common word's first page: the walk of the primary key in order fills it", async () => {
    const plans = await plansOf(() => products.findPage({ words: ['gift'] }, 0, 15));
    expect(plans).toHaveLength(1);
    expectOrderedByIndex(plans[0]!);
  });

  it('KNOWN SCAN: words shorter than a gram (1-2 characters) alone read every product to count them', async () => {
    const [count] = await plansOf(() => products.count({ words: ['tv'] }));
    const wholeCollection = count!.nodes.some(
      (node) =>
        node['Node Type'] === 'Seq Scan' ||
        (INDEX_READS.has(node['Node Type']) && WHOLE_COLLECTION.test(node['Index Cond'] ?? '')),
    );
    expect(wholeCollection, describePlan(count!)).toBe(true);
  });

  // The total counts only products a page can serve (src/db/catalog/readable-filter.ts): every row is read
  // once, in one sequential scan testing the types of the required fields; no index (a clause on
  // an indexed field would have the planner combine whole indexes). Kept totals pay it once.
  it('the exact total of the catalogue reads every row once, never an estimate', async () => {
    expect(await products.count({ words: [] })).toBe(PRODUCTS);
    const [count] = await plansOf(() => products.count({ words: [] }));
    const reads = count!.nodes.filter((node) => node['Node Type'] !== 'Aggregate' && !node.Plans);
    expect(
      reads.map((node) => node['Node Type']),
      describePlan(count!),
    ).toEqual(['Seq Scan']);
  });
});

describe('order reads at 20,000 orders', () => {
  it('by ULID: the primary key', async () => {
    const [plan] = await plansOf(() => orders.findByUlid(sample.ulid));
    expectIndexed(plan!, '_id_');
  });

  it('by ids and by item ids: their indexes', async () => {
    const [byIds] = await plansOf(() => orders.findByIds([sample.id]));
    expectIndexed(byIds!, 'id_1');
    const [byItems] = await plansOf(() => orders.findByItemIds([sample.items[0]!.id]));
    expectIndexed(byItems!, 'items.id_1');
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
    expectIndexed(plans[1]!, 'customer_id_1');
    const [count] = await plansOf(() => orders.countMatching({ customerId: rareCustomer }));
    expectIndexed(count!, 'customer_id_1');
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

describe('documents another writer keyed its own way (issue 26)', () => {
  it('a product or an order by its id / ulid: the primary key misses, then id_1 / ulid_1', async () => {
    const storedProducts = tdb.db.collection('products');
    const storedOrders = tdb.db.collection('orders');
    const product = (await storedProducts.findOne({ id: 7 }, { projection: { _id: 0 } }))!;
    const order = (await storedOrders.findOne({ id: sample.id + 1 }, { projection: { _id: 0 } }))!;
    // As the plain driver writes them: a new ObjectId each.
    await storedProducts.deleteOne({ id: 7 });
    await storedProducts.insertOne({ ...product });
    await storedOrders.deleteOne({ ulid: order.ulid });
    await storedOrders.insertOne({ ...order });
    try {
      const [ownKey, byId] = await plansOf(() => products.findByIds([7]));
      expectIndexed(ownKey!, '_id_');
      expectIndexed(byId!, 'id_1');
      const [ownUlid, byUlid] = await plansOf(() => orders.findByUlid(order.ulid as string));
      expectIndexed(ownUlid!, '_id_');
      expectIndexed(byUlid!, 'ulid_1');
    } finally {
      await storedProducts.deleteOne({ id: 7 });
      await storedProducts.insertOne({ ...product, _id: 7 } as Document);
      await storedOrders.deleteOne({ ulid: order.ulid });
      await storedOrders.insertOne({ ...order, _id: order.ulid } as Document);
    }
  });
});
