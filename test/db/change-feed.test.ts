import { ObjectId, type Collection, type CommandStartedEvent, type Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openChangeFeed, type ChangeFeed } from '../../src/db/change-feed';
import type { FeedBatch } from '../../src/db/feed-types';
import { connectDatabase } from '../../src/db/mongo';
import { openTestDatabase, type TestDatabase } from '../support/database';

/**
 * The change feed on the embedded engine (no change streams: it polls `updated_at`), against a
 * collection written with the plain driver: what it hands on, in what batches, from where it
 * resumes, and how it reports what it cannot see.
 */

let tdb: TestDatabase;
let things: Collection<Document>;
/** No look-back here, but in its own test: a feed started again re-reads the look-back's writes. */
const SETTINGS = { intervalMs: 100, batchSize: 10, reconcileMs: 1_000, lookBackMs: 0 };
const LOOK_BACK = { lookBackMs: 5_000 };

/** A feed with a listener that records every batch. */
async function recordingFeed(
  options: Partial<typeof SETTINGS> = {},
  listener?: (batch: FeedBatch<Document>) => void,
): Promise<{ feed: ChangeFeed<Document>; batches: FeedBatch<Document>[]; ids: () => string[] }> {
  const feed = await openChangeFeed<Document>(tdb.db, 'things', { ...SETTINGS, ...options });
  const batches: FeedBatch<Document>[] = [];
  feed.subscribe((batch) => {
    listener?.(batch);
    batches.push(batch);
  });
  const ids = () => batches.flatMap((batch) => batch.changes.map((change) => String(change._id)));
  return { feed, batches, ids };
}

/** `updated_at` as a Laravel app writes it by default: `YYYY-MM-DD HH:MM:SS`, UTC. */
function laravelTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  tdb = await openTestDatabase('feed');
  things = tdb.db.collection('things');
  await things.createIndex({ updated_at: 1 });
  await things.insertMany(
    [1, 2, 3].map((n) => ({ _id: n as never, updated_at: new Date(Date.UTC(2024, 0, n)) })),
  );
});
afterAll(() => tdb.close());

describe('a polling change feed', () => {
  it('polls on FerretDB, starts at the newest document (the past is the backfill’s) and hands on each later write once', async () => {
    const { feed, ids } = await recordingFeed();
    expect(feed.mode).toBe('poll');
    expect(feed.handledBefore()!.date).toEqual(new Date(Date.UTC(2024, 0, 3)));
    // 25 documents with one timestamp, `_id`s of three types, read in batches of 10.
    const at = new Date();
    const written = [
      ...Array.from({ length: 15 }, (_, n) => ({ _id: 100 + n })),
      ...Array.from({ length: 5 }, (_, n) => ({ _id: `s${n}` })),
      ...Array.from({ length: 5 }, () => ({ _id: new ObjectId() })),
    ].map((doc) => ({ ...doc, updated_at: at }));
    await things.insertMany(written as Document[]);
    await until('all 25 handed on', () => ids().length >= 25);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(ids().sort()).toEqual(written.map((doc) => String(doc._id)).sort());
    expect(feed.handledBefore()!.date).toEqual(at);
    expect(feed.lagSeconds()).toBeLessThan(1);
    await feed.close();
  });

  it('with no saved position starts at a recent newest write (looked for nearest first), not at an older one', async () => {
    const tenMinutesAgo = new Date(Date.now() - 600_000);
    const others = tdb.db.collection('recent-things');
    await others.createIndex({ updated_at: 1 });
    await others.insertMany([
      { _id: 'old' as never, updated_at: new Date(Date.UTC(2024, 0, 1)) },
      { _id: 'recent' as never, updated_at: tenMinutesAgo },
      { _id: 'hour' as never, updated_at: new Date(Date.now() - 3_000_000) },
    ]);
    const feed = await openChangeFeed<Document>(tdb.db, 'recent-things', SETTINGS);
    expect(feed.handledBefore()!.date).toEqual(tenMinutesAgo);
    await feed.close();
  });

  it('resumes from its saved position after a restart: writes made while it was down are handed on', async () => {
    const { feed: first } = await recordingFeed();
    await first.close();
    await things.insertOne({ _id: 'while-down' as never, updated_at: new Date() });
    await things.updateOne({ _id: 100 as never }, { $set: { updated_at: new Date(), name: 'changed' } });
    const { feed, ids } = await recordingFeed();
    await until('both handed on', () => ids().length >= 2);
    expect(ids().sort()).toEqual(['100', 'while-down']);
    await feed.close();
  });

  it('hands a batch on again when a listener failed on it: nothing is skipped', async () => {
    let failures = 1;
    const { feed, ids } = await recordingFeed({}, () => {
      if (failures-- > 0) throw new Error('listener down');
    });
    await things.insertOne({ _id: 'retried' as never, updated_at: new Date() });
    await until('handed on after the failure', () => ids().includes('retried'));
    expect(ids()).toEqual(['retried']);
    await feed.close();
  });

  it('reports deletions it cannot see as unseen changes within the reconcile interval', async () => {
    const { feed, batches } = await recordingFeed();
    await things.insertOne({ _id: 'new' as never, updated_at: new Date(), created_at: new Date() });
    await until('the insert handed on', () => batches.some((b) => b.changes.length > 0));
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    // An insert with created_at is explained by what the feed saw: no report.
    expect(batches.some((batch) => batch.unseenChanges)).toBe(false);
    await things.deleteOne({ _id: 1 as never });
    await until('the deletion reported', () => batches.some((batch) => batch.unseenChanges), 3_000);
    await feed.close();
  });

  it('never counts the collection when no listener acts on deletions (the orders), and still hands on changes', async () => {
    const watched = await connectDatabase({ uri: tdb.uri, dbName: tdb.dbName, monitorCommands: true });
    const counts: string[] = [];
    watched.client.on('commandStarted', (event: CommandStartedEvent) => {
      if (event.commandName === 'aggregate' && JSON.stringify(event.command.pipeline).includes('$group'))
        counts.push(String(event.command.aggregate));
    });
    try {
      for (const reportsDeletions of [false, true]) {
        counts.length = 0;
        // Deleted after the feed's first count, so no count can be explained by what it saw.
        const id = `counted-${reportsDeletions}`;
        await things.insertOne({ _id: id as never, updated_at: new Date(Date.UTC(2023, 0, 1)) });
        const feed = await openChangeFeed<Document>(watched.db, 'things', { ...SETTINGS, reportsDeletions });
        const batches: FeedBatch<Document>[] = [];
        feed.subscribe((batch) => void batches.push(batch));
        await things.deleteOne({ _id: id as never });
        await things.insertOne({ _id: `${id}-2` as never, updated_at: new Date(), created_at: new Date() });
        await until('the insert handed on', () =>
          batches.some((b) => b.changes.some((c) => c._id === `${id}-2`)),
        );
        // The counting feed reports within its interval (1 s, or 400× a count's time); the other
        // is given longer than 1 s, and sends no count at all, not even its first.
        if (reportsDeletions)
          await until('the deletion reported', () => batches.some((batch) => batch.unseenChanges), 10_000);
        else await new Promise((resolve) => setTimeout(resolve, 1_500));
        await feed.close();
        expect(counts.length > 0).toBe(reportsDeletions);
        expect(batches.some((batch) => batch.unseenChanges)).toBe(reportsDeletions);
      }
    } finally {
      await watched.close();
    }
  });

  it('leaves a document stamped in the future until its time, as a date or as text', async () => {
    const { feed, ids } = await recordingFeed();
    await things.insertMany([
      { _id: 'future' as never, updated_at: new Date(Date.now() + 3_600_000) },
      { _id: 'future-text' as never, updated_at: laravelTime(Date.now() + 3_600_000) },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await things.insertOne({ _id: 'later' as never, updated_at: new Date() });
    await until('the later write handed on', () => ids().includes('later'));
    expect(ids()).toEqual(['later']);
    await feed.close();
  });

  it('follows dates written as text in Laravel’s form, with a watermark of their own, across a restart', async () => {
    const { feed, ids } = await recordingFeed();
    const now = Date.now();
    // Twelve writes in one second of text (Laravel's are whole seconds), read in batches of 10,
    // one a second earlier, and a BSON date later than all: each kind has its own watermark.
    await things.insertMany([
      ...Array.from({ length: 12 }, (_, n) => ({ _id: `text-${n}`, updated_at: laravelTime(now) })),
      { _id: 'text-earlier', updated_at: laravelTime(now - 1_000) },
      { _id: 'iso-with-zone', updated_at: new Date(now).toISOString() },
    ] as Document[]);
    await things.insertOne({ _id: 'date-later' as never, updated_at: new Date(now + 2_000) });
    await until('the 13 text dates and the date handed on', () => ids().length >= 14);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ids().sort()).toEqual(
      ['date-later', 'text-earlier', ...Array.from({ length: 12 }, (_, n) => `text-${n}`)].sort(),
    );
    await feed.close();

    await things.updateOne({ _id: 'text-3' as never }, { $set: { updated_at: laravelTime(now + 1_000) } });
    const { feed: restarted, ids: after } = await recordingFeed();
    await until('the write made while it was down handed on', () => after().length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(after()).toEqual(['text-3']);
    expect(await restarted.hasUnhandled()).toBe(false);
    await things.insertOne({ _id: 'text-new' as never, updated_at: laravelTime(now + 2_000) });
    expect(await restarted.hasUnhandled()).toBe(true);
    await restarted.close();
  });

  it('hands on a write that commits after a later-stamped one was handled, within the look-back, once', async () => {
    const { feed, ids } = await recordingFeed(LOOK_BACK);
    const now = Date.now();
    await things.insertOne({ _id: 'stamped-now' as never, updated_at: new Date(now) });
    await until('the first write handed on', () => ids().includes('stamped-now'));
    // Products stamped within the look-back are not known to be handled (searches match them as pending).
    expect(feed.handledBefore()!.date.getTime()).toBeLessThan(now);
    // A slow transaction (or a clock 2 s behind) commits a write stamped before the one handled,
    // as a date and as text; one stamped a minute back is past the look-back.
    await things.insertMany([
      { _id: 'late-date', updated_at: new Date(now - 2_000) },
      { _id: 'late-text', updated_at: laravelTime(now - 2_000) },
      { _id: 'too-late', updated_at: new Date(now - 60_000) },
    ] as Document[]);
    expect(await feed.hasUnhandled()).toBe(true);
    await until(
      'both late writes handed on',
      () => ids().includes('late-date') && ids().includes('late-text'),
    );
    expect(await feed.hasUnhandled()).toBe(false);
    // Handed on once, though every poll within the look-back reads them again.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const mine = new Set(['stamped-now', 'late-date', 'late-text', 'too-late']);
    expect(
      ids()
        .filter((id) => mine.has(id))
        .sort(),
    ).toEqual(['late-date', 'late-text', 'stamped-now']);
    await feed.close();
  });

  it('after a bulk write in one second, more than it remembers, says nothing is unhandled once it is handed on', async () => {
    const { feed, ids } = await recordingFeed({ lookBackMs: 500, batchSize: 100 });
    const at = new Date();
    const bulk = Array.from({ length: 1_100 }, (_, n) => ({ _id: 5_000 + n, updated_at: at }));
    await things.insertMany(bulk as Document[]);
    await until('all 1,100 handed on', () => ids().length >= 1_100);
    // Past the look-back (twice it, when what it remembers is forgotten).
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await feed.hasUnhandled()).toBe(false);
    expect(ids().filter((id, n) => ids().indexOf(id) !== n)).toEqual([]);
    await feed.close();
  });

  it('hands a late text-dated write on once, though text stamps are whole seconds', async () => {
    const { feed, ids } = await recordingFeed({ lookBackMs: 500 });
    const now = Date.now();
    await things.insertOne({ _id: 'text-ahead' as never, updated_at: laravelTime(now + 3_000) });
    await until('the later-stamped write handed on', () => ids().includes('text-ahead'));
    await things.insertOne({ _id: 'text-late' as never, updated_at: laravelTime(now) });
    await until('the late write handed on', () => ids().includes('text-late'));
    // Until its second has left the look-back, every poll reads it again.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(ids().filter((id) => id === 'text-late')).toEqual(['text-late']);
    await feed.close();
  });
});
