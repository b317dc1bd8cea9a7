import pg from 'pg';
import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { criteriaFor } from '../../src/catalog/product-query';
import { productFilter } from '../../src/db/catalog/product-plans';
import { SEARCH_PROJECTION_COLLECTION } from '../../src/db/catalog/search-projection-mark';
import { lastingSlotName } from '../../src/db/feed/log';
import { openOutsideWriter, type OutsideWriter } from '../support/outside-writer';
import { graphqlSearch, restSearch } from '../support/search-answers';
import { startTestServer, type TestServer } from '../support/server';

/**
 * While the fleet's search rows fall behind (the lasting slot's holder cannot write them: here a
 * lock on their table, in production an owner's bulk update of 20,000 products taking it 30 s
 * or more), a search still reads the grams for every product but those the holder has not
 * written, and reads those few from the products themselves: exact at once, no scan of the
 * collection, and its total kept, not counted again per request.
 */

let server: TestServer;
let writer: OutsideWriter;
let sql: pg.Client;
const word = () => `behind${Math.random().toString(36).slice(2, 9)}`;

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await server.request('/metrics')).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name}{${labels}} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function scanIds(term: string): Promise<number[]> {
  const found = await writer.products
    .find(productFilter(criteriaFor(term, undefined)) as Document, { projection: { _id: 1 } })
    .toArray();
  return found.map((doc) => doc._id as unknown as number).sort((a, b) => a - b);
}

async function expectExact(term: string): Promise<number[]> {
  const expected = await scanIds(term);
  for (const answer of [await restSearch(server, term), await graphqlSearch(server, term)]) {
    expect(
      [...answer.ids].sort((a, b) => a - b),
      term,
    ).toEqual(expected);
    expect(answer.total, term).toBe(expected.length);
  }
  return expected;
}

/** WAL the lasting slot has not confirmed before `lsn` (now, by default): its holder is behind by that much. */
async function holderBehindBytes(lsn?: string): Promise<number> {
  const { rows } = await sql.query<{ behind: string }>(
    `SELECT pg_wal_lsn_diff(COALESCE($2::pg_lsn, pg_current_wal_lsn()), confirmed_flush_lsn)::text AS behind
       FROM pg_replication_slots WHERE slot_name = $1`,
    [lastingSlotName(server.testDb.dbName), lsn ?? null],
  );
  return Number(rows[0]?.behind ?? 0);
}

/** Waits (at most 20 s) until the holder has written everything committed so far. */
async function holderCaughtUp(): Promise<void> {
  const { rows } = await sql.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  const deadline = Date.now() + 20_000;
  while ((await holderBehindBytes(rows[0]!.lsn)) > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
}

beforeAll(async () => {
  // What is tested is the holder being behind, not this instance's own channel: under a full
  // suite's load the own channel can take longer than the default 1 s to hand a write on, and a
  // request then scans (exact) for that reason; 5 s keeps it waiting for the channel instead.
  server = await startTestServer({ env: { CHANGE_FEED_WAIT_MS: '5000' } });
  writer = await openOutsideWriter(server.testDb.uri, server.testDb.dbName);
  sql = new pg.Client({ connectionString: server.testDb.postgresUrl });
  await sql.connect();
  const deadline = Date.now() + 10_000;
  while ((await metric('change_feed_log_leading', '').catch(() => 0)) !== 1 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
});

afterAll(async () => {
  await sql?.end();
  await writer?.close();
  await server?.close();
});

describe('searches while the search rows fall behind', () => {
  it('read the grams for the rest and the pending products themselves: exact at once, no scan, totals kept', async () => {
    const { rows } = await sql.query<{ id: string }>(
      `SELECT collection_id::text AS id FROM documentdb_api_catalog.collections
        WHERE database_name = $1 AND collection_name = $2`,
      [server.testDb.dbName, SEARCH_PROJECTION_COLLECTION],
    );
    const ids = (await writer.products
      .find({ _id: { $type: 'number' } } as Document, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(3)
      .toArray()) as unknown as { _id: number }[];
    const [before, after] = [word(), word()];
    for (const { _id } of ids)
      await writer.products.updateOne({ _id } as Document, { $set: { short_description: `was ${before}` } });
    expect(await expectExact(before)).toHaveLength(3);

    // The holder caught up first (it then falls behind from there): an instance knows which rows
    // are unwritten only past the holder's position when its own channel began.
    await holderCaughtUp();
    // Readers pass; the holder's writes of the search rows wait.
    await sql.query('BEGIN');
    await sql.query(`LOCK TABLE documentdb_data.documents_${rows[0]!.id} IN EXCLUSIVE MODE`);
    try {
      const scans = await metric('product_search_scans_total', 'reason="feed_behind"');
      // No updated_at: followed by the log alone.
      await writer.products.updateMany({ _id: { $in: ids.map(({ _id }) => _id) } } as Document, {
        $set: { short_description: `now ${after}` },
      });
      const notCurrent = await metric('kept_totals_counted_total', 'reason="not_current"');
      for (let round = 0; round < 3; round++) {
        expect(await expectExact(after)).toHaveLength(3);
        expect(await expectExact(before)).toHaveLength(0);
      }
      // Another change while the first are still pending: the matches read for them are not reused.
      const again = word();
      await writer.products.updateOne({ _id: ids[0]!._id } as Document, {
        $set: { short_description: `then ${again}` },
      });
      expect(await expectExact(after)).toHaveLength(2);
      expect(await expectExact(again)).toHaveLength(1);
      expect(await holderBehindBytes()).toBeGreaterThan(0);
      expect(await metric('product_search_scans_total', 'reason="feed_behind"')).toBe(scans);
      expect(await metric('kept_totals_counted_total', 'reason="not_current"')).toBe(notCurrent);
    } finally {
      await sql.query('ROLLBACK');
    }
    await holderCaughtUp();
    await expectExact(after);
    await expectExact(before);
  });
});
