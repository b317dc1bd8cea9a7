import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import pg from 'pg';
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from '../support/database';
import { openOutsideWriter, type OutsideWriter } from '../support/outside-writer';
import { listeningUrl, serverProcessEnv, spawnServer, stopProcess } from '../support/processes';

/**
 * Three instances on one database, following the engine's log: one of them holds the lasting slot
 * and writes each change's grams once for the fleet, into the gateway's own collection (never into
 * products or orders); every instance answers a rename at once; the
 * holder killed (SIGKILL, no goodbye), another takes the slot within 5 s and nothing is missed.
 */

let database: TestDatabase;
let writer: OutsideWriter;
let sql: pg.Client;
const instances: { child: ChildProcessWithoutNullStreams; url: string }[] = [];

async function leading(url: string): Promise<boolean> {
  const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
  return /^change_feed_log_leading 1$/m.test(text);
}

async function leaders(): Promise<number[]> {
  const alive = instances.filter(({ child }) => child.exitCode === null && child.signalCode === null);
  const flags = await Promise.all(alive.map(({ url }) => leading(url)));
  return alive.flatMap((instance, index) => (flags[index] ? [instances.indexOf(instance)] : []));
}

async function untilOneLeader(timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await leaders();
    if (now.length === 1) return now[0]!;
    if (Date.now() > deadline) throw new Error(`leaders: ${JSON.stringify(now)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function searchIds(url: string, term: string): Promise<number[]> {
  const response = await fetch(`${url}/api/v1/products/search?term=${term}&per_page=100`);
  return ((await response.json()) as { data: { id: number }[] }).data.map((product) => product.id);
}

const WATCHED = ['products', 'orders', 'product_search'] as const;
type Watched = (typeof WATCHED)[number];

/** Rows written to each watched collection's table since the last call, read from a slot of the test's own. */
async function writesSince(): Promise<Record<Watched, number>> {
  const { rows } = await sql.query<{ data: string }>(
    `SELECT data FROM pg_logical_slot_get_changes('fleet_test_watch', NULL, NULL)`,
  );
  const { rows: tables } = await sql.query<{ id: string; name: Watched }>(
    `SELECT collection_id::text AS id, collection_name AS name FROM documentdb_api_catalog.collections
      WHERE database_name = $1 AND collection_name = ANY($2)`,
    [database.dbName, [...WATCHED]],
  );
  const counts = Object.fromEntries(WATCHED.map((name) => [name, 0])) as Record<Watched, number>;
  for (const { id, name } of tables) {
    const prefix = `table documentdb_data.documents_${id}: `;
    counts[name] = rows.filter((row) => row.data.startsWith(prefix)).length;
  }
  return counts;
}

const word = () => `fleet${Math.random().toString(36).slice(2, 9)}`;

beforeAll(async () => {
  database = await openTestDatabase('log_fleet');
  await loadFixtures(database.db);
  writer = await openOutsideWriter(database.uri, database.dbName);
  sql = new pg.Client({ connectionString: database.postgresUrl });
  await sql.connect();
  // Gone with this connection.
  await sql.query(`SELECT pg_create_logical_replication_slot('fleet_test_watch', 'test_decoding', true)`);
  for (let n = 0; n < 3; n++) {
    const child = spawnServer(serverProcessEnv(database, { LOG_LEVEL: 'info' }));
    instances.push({ child, url: await listeningUrl(child) });
  }
});

afterAll(async () => {
  await Promise.all(instances.map(({ child }) => stopProcess(child)));
  await sql?.end();
  await writer?.close();
  await database?.close();
});

describe('three instances following one log', () => {
  it('write nothing into products or orders, from their start on (their resync writes only their own rows)', async () => {
    await untilOneLeader(15_000);
    for (const { url } of instances) {
      expect(await searchIds(url, 'card')).not.toEqual([]);
      expect((await fetch(`${url}/api/v1/products?per_page=5`)).status).toBe(200);
    }
    const writes = await writesSince();
    expect({ products: writes.products, orders: writes.orders }).toEqual({ products: 0, orders: 0 });
  });

  it("write each change's grams once, into their own collection, and every instance answers it at once", async () => {
    await untilOneLeader(15_000);
    const id = 3;
    const name = word();
    await writesSince();
    await writer.products.updateOne({ _id: id } as Document, { $set: { name: `Card ${name}` } });
    for (const { url } of instances) expect(await searchIds(url, name)).toEqual([id]);
    // The owner's rename, and the holder's one write of the product's row; more would mean each wrote.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await writesSince()).toEqual({ products: 1, orders: 0, product_search: 1 });
  });

  it('hand the reading on within 5 s when the holder is killed, and miss nothing', async () => {
    const holder = await untilOneLeader(15_000);
    const killed = new Promise((resolve) => instances[holder]!.child.once('exit', resolve));
    instances[holder]!.child.kill('SIGKILL');
    await killed;
    const started = Date.now();
    const name = word();
    // Written while nobody holds the slot: the next holder hands it on from the slot's position.
    await writer.products.updateOne({ _id: 4 } as Document, { $set: { name: `Card ${name}` } });
    const next = await untilOneLeader(5_000);
    expect(next).not.toBe(holder);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const [index, { url }] of instances.entries())
      if (index !== holder) expect(await searchIds(url, name)).toEqual([4]);
  });
});
