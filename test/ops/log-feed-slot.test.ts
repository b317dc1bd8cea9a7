import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { MongoClient, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { lastingSlotName } from '../../src/db/feed/log';
import { ensureSlotsTable, SLOTS_TABLE } from '../../src/db/feed/log-abandoned';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/engine';
import { createLogger } from '../../src/logger';
import { startServer, type RunningServer } from '../../src/server';
import { loadFixtures } from '../../seed/load';
import { TEST_JWT_SECRET } from '../support/server';

/**
 * A gateway stopped while other writers go on cannot fill the disk: its lasting slot holds at most
 * `max_slot_wal_keep_size` of WAL (16 MB on this cluster of the test's own), past which PostgreSQL
 * invalidates it. The next start reports the lost slot (log line and /metrics), makes a new one and
 * resyncs the grams, so a product renamed without `updated_at` while it was down is found by its
 * new name, and not by its old.
 */

const BOUND_MB = 16;
const DB = 'slot_lost';
let dataDir: string;
let engine: EmbeddedDatabase;
let sql: pg.Client;
let writer: MongoClient;

const startGateway = () =>
  startServer({
    config: loadConfig({
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      MONGODB_URI: engine.uri,
      MONGODB_DB: DB,
      CHANGE_FEED_POSTGRES_URL: engine.postgresUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      SEED_FIXTURES: 'false',
      LOG_LEVEL: 'silent',
    }),
    logger: createLogger('silent'),
  });

async function metric(server: RunningServer, line: RegExp): Promise<string | undefined> {
  return line.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1];
}

async function searchIds(server: RunningServer, term: string): Promise<number[]> {
  const response = await fetch(`${server.url}/api/v1/products/search?term=${term}`);
  return ((await response.json()) as { data: { id: number }[] }).data.map((product) => product.id);
}

async function walMb(): Promise<number> {
  const { rows } = await sql.query<{ bytes: string }>('SELECT sum(size)::text AS bytes FROM pg_ls_waldir()');
  return Number(rows[0]!.bytes) / 2 ** 20;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sf-slot-lost-'));
  engine = await startEmbeddedDatabase({
    dataDir,
    throwaway: true,
    log: () => undefined,
    settings: { max_slot_wal_keep_size: `${BOUND_MB}MB`, max_wal_size: '32MB', min_wal_size: '32MB' },
  });
  sql = new pg.Client({ connectionString: engine.postgresUrl });
  await sql.connect();
  writer = await MongoClient.connect(engine.uri);
  await loadFixtures(writer.db(DB));
}, 120_000);

afterAll(async () => {
  await writer?.close();
  await sql?.end();
  await engine?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a lasting slot past its bound', () => {
  it('keeps the WAL within the bound while the gateway is down, then is reported and resynced', async () => {
    const first = await startGateway();
    expect(await metric(first, /^change_feed_log_events\{event="resync"\} (\d+)$/m)).toBe('1');
    await first.close();

    // Down: a rename without updated_at, then far more WAL than the bound (other writers' work).
    await writer
      .db(DB)
      .collection('products')
      .updateOne({ id: 2 } as Document, { $set: { name: 'Quokkavine Card' } });
    await sql.query('CREATE TABLE filler (pad text)');
    for (let round = 0; round < 6; round++) {
      await sql.query(`INSERT INTO filler SELECT repeat(md5(g::text), 32) FROM generate_series(1, 20000) g`);
      await sql.query('CHECKPOINT');
    }
    const { rows } = await sql.query<{ wal_status: string }>(
      'SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1',
      [lastingSlotName(DB)],
    );
    expect(rows[0]?.wal_status).toBe('lost');
    // ~80 MB were written; what is kept is the bound and max_wal_size's recycling, not all of it.
    expect(await walMb()).toBeLessThan(BOUND_MB + 32 + 16);

    const second = await startGateway();
    try {
      expect(await metric(second, /^change_feed_log_events\{event="slot_lost"\} (\d+)$/m)).toBe('1');
      expect(await metric(second, /^change_feed_log_events\{event="resync"\} (\d+)$/m)).toBe('1');
      expect(await searchIds(second, 'quokkavine')).toEqual([2]);
      // And it follows again from the new slot.
      await writer
        .db(DB)
        .collection('products')
        .updateOne({ id: 3 } as Document, { $set: { name: 'Bramblequill Card' } });
      expect(await searchIds(second, 'bramblequill')).toEqual([3]);
    } finally {
      await second.close();
    }
  });
});

describe('lasting slots of fleets that are gone', () => {
  it('are dropped once unserved for CHANGE_FEED_SLOT_ABANDON_HOURS; served and newly seen ones stay', async () => {
    const [abandoned, unseen] = ['a', 'b'].map((digit) => `storefront_${digit.repeat(24)}`) as [
      string,
      string,
    ];
    for (const slot of [abandoned, unseen])
      await sql.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
    await ensureSlotsTable(sql);
    // Last served eight days ago (the default bound is seven).
    await sql.query(`INSERT INTO ${SLOTS_TABLE} (slot, served_at) VALUES ($1, now() - interval '8 days')`, [
      abandoned,
    ]);
    const gateway = await startGateway();
    try {
      const slots = async () =>
        (await sql.query<{ slot_name: string }>('SELECT slot_name FROM pg_replication_slots')).rows.map(
          (row) => row.slot_name,
        );
      for (let waited = 0; (await slots()).includes(abandoned) && waited < 5_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await slots()).not.toContain(abandoned);
      // One an older gateway made, first seen now: its time starts now. And this database's own.
      expect(await slots()).toEqual(expect.arrayContaining([unseen, lastingSlotName(DB)]));
      expect(await metric(gateway, /^change_feed_log_events\{event="abandoned_slot_dropped"\} (\d+)$/m)).toBe(
        '1',
      );
    } finally {
      await gateway.close();
    }
  });
});
