import { afterEach, describe, expect, inject, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/mongo';
import { LinkedSet } from '../../src/linked-set';

/**
 * The driver's sets of open cursors and sessions are LinkedSets (src/db/client-open-sets.ts), and
 * the driver still closes what is open when the client closes. Fails when a driver upgrade keeps
 * them under other names: then what they cost is to be measured again.
 */

let database: Database | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
});

type ClientState = { s: { activeCursors: LinkedSet<object>; activeSessions: LinkedSet<object> } };

describe("the client's open cursors and sessions", () => {
  it('are kept in LinkedSets, left empty by finished reads and closed with the client', async () => {
    database = await connectDatabase({ uri: inject('mongoUri'), dbName: 'client_open_sets' });
    const { s } = database.client as unknown as ClientState;
    expect(s.activeCursors).toBeInstanceOf(LinkedSet);
    expect(s.activeSessions).toBeInstanceOf(LinkedSet);

    const things = database.db.collection<{ n: number }>('things');
    await things.deleteMany({});
    await things.insertMany([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await things.findOne({ n: 2 })).toMatchObject({ n: 2 });
    expect(s.activeCursors.size).toBe(0);
    expect(s.activeSessions.size).toBe(0);

    const cursor = things.find({}, { batchSize: 1 });
    await cursor.next();
    expect(s.activeCursors.size).toBe(1);
    await database.close();
    database = undefined;
    expect(cursor.closed).toBe(true);
    expect(s.activeCursors.size).toBe(0);
    expect(s.activeSessions.size).toBe(0);
  });
});
