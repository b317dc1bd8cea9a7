import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { watchHeartbeats } from '../../src/db/guards/heartbeat-watchdog';
import { waitUntil } from '../support/processes';

/**
 * A real client on the run's database. The stuck heartbeat is the driver's own event with no end
 * after it: what the monitor emits when it hangs on a destroyed socket (src/db/guards/heartbeat-watchdog.ts).
 */

const clients: MongoClient[] = [];
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  for (const client of clients.splice(0)) await client.close();
});

async function watched(stuckAfterMs: number) {
  const client = new MongoClient(inject('mongoUri'), { serverSelectionTimeoutMS: 3_000 });
  clients.push(client);
  await client.connect();
  const lines: string[] = [];
  stops.push(watchHeartbeats(client, { stuckAfterMs, log: (message) => lines.push(message) }));
  const collection = client.db('heartbeat_watchdog').collection('things');
  return { client, lines, collection };
}

const heartbeat = (awaited = false) => ({ connectionId: 'stuck.example:27017', awaited });

describe('the heartbeat watchdog', () => {
  it('connects the client again when a heartbeat never ends, and the same collection serves again', async () => {
    const { client, lines, collection } = await watched(200);
    let closed = 0;
    client.on('topologyClosed', () => closed++);
    client.emit('serverHeartbeatStarted', heartbeat() as never);
    expect(await waitUntil(() => lines.includes('database client connected again'), 5_000)).toBe(true);
    expect(lines[0]).toBe('database monitor stuck; connecting the client again');
    expect(closed).toBe(1);
    expect(await collection.countDocuments({})).toBe(0);
  });

  it('leaves a heartbeat that ends alone, and gives an awaited one the heartbeat period too', async () => {
    const { client, lines, collection } = await watched(200);
    client.emit('serverHeartbeatStarted', heartbeat() as never);
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.emit('serverHeartbeatSucceeded', heartbeat() as never);
    client.emit('serverHeartbeatStarted', heartbeat(true) as never);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(lines).toEqual([]);
    expect(await collection.countDocuments({})).toBe(0);
  });

  it('does nothing once stopped', async () => {
    const { client, lines } = await watched(100);
    client.emit('serverHeartbeatStarted', heartbeat() as never);
    stops.pop()!();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(lines).toEqual([]);
  });
});
