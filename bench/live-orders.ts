import { mkdir } from 'node:fs/promises';
import { request, type ClientRequest } from 'node:http';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import type { Collection, Document } from 'mongodb';
import { openBenchDatabase, type BenchDatabase } from './database';
import { median, percentile } from './median';
import { rssMb, totalCpuMs } from './proc';
import { mainThreadProfile } from './profile-run';
import { formatProfileSummary, readProfile, summariseProfile, type ProfileWindow } from './profile-summary';
import { startServerProcess, type ServerProcess } from './servers';

const USAGE = `Usage: npm run bench:live -- [--subscriptions N] [--rate R] [--seconds S]

Live orders (GraphQL subscriptions over SSE) on one server process (NODE_ENV=production, the
change feed's default 1 s interval), its subscribers all in this process over loopback:
  1. one subscriber: write → event latency, and the database's CPU per second idle and at R
     order changes/s (written through the plain driver to random orders);
  2. N subscribers (one order each): the server's RSS before and after, the same idle and R/s
     database CPU, and write → event latency at R/s; the server's idle CPU twice: in the S
     seconds just after opening (the openings' garbage is collected then), and in the steady
     state after that (S seconds, at least one keep-alive interval);
  3. SIGTERM: the time until every stream has its last event and has ended.

  --subscriptions N   open subscriptions in step 2 (default 5000)
  --rate R            order changes per second while loaded (default 50)
  --seconds S         length of each CPU window (default 10)
  --profile           run the server under node --cpu-prof and print the self time of step 2's
                      steady idle window (its CPU figures then include the profiler's own cost)

The database is the embedded one in bench/.data/live (or MONGODB_URI).`;

const JWT_SECRET = 'bench-secret-of-at-least-32-characters-000';
const DB_NAME = 'storefront_live';
const STATES = ['processing', 'partially_fulfilled', 'completed', 'refunded', 'pending'];
const log = (line: string) => console.error(`[live] ${line}`);
/** Yoga writes a comment to every open stream this often (graphql-yoga's SSE result processor). */
const KEEP_ALIVE_SECONDS = 12;

const { values } = parseArgs({
  options: {
    subscriptions: { type: 'string', default: '5000' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '10' },
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const subscriptionCount = Number(values.subscriptions);
const rate = Number(values.rate);
const seconds = Number(values.seconds);

/** When each write was made, by `ulid status`, and the write → event delays seen. */
const written = new Map<string, number>();
let delays: number[] = [];
/** Streams that got the shutdown's last event, and then `complete`. */
const farewell = { retryHint: 0, complete: 0 };

interface Stream {
  request: ClientRequest;
  done: Promise<void>;
  /** Whether the first event was the order (not an error such as admission control's 503). */
  firstEvent: Promise<boolean>;
}

/** One subscription over its own connection; events are parsed just enough to time them. */
function openStream(origin: string, token: string, ulid: string): Stream {
  let first!: (isOrder: boolean) => void;
  const firstEvent = new Promise<boolean>((resolve) => (first = resolve));
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const body = JSON.stringify({
    query: 'subscription ($ulid: ID!) { order(ulid: $ulid) { ulid fulfillmentStatus } }',
    variables: { ulid },
  });
  const req = request(`${origin}/graphql`, {
    method: 'POST',
    agent: false,
    headers: {
      accept: 'text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
    },
  });
  req.on('response', (res) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const at = performance.now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.includes('event: complete')) farewell.complete++;
        const data = /^data: (\{.*\})$/m.exec(frame)?.[1];
        if (!data) continue;
        if (data.includes('"SERVICE_UNAVAILABLE"') && data.includes('"retryAfter"')) farewell.retryHint++;
        first(data.includes('"order":{'));
        const order = (JSON.parse(data) as { data?: { order?: { ulid: string; fulfillmentStatus: string } } })
          .data?.order;
        const key = order && `${order.ulid} ${order.fulfillmentStatus.toLowerCase()}`;
        const sent = key === undefined ? undefined : written.get(key);
        if (sent !== undefined) {
          delays.push(at - sent);
          written.delete(key as string);
        }
      }
    });
    res.on('close', finish);
  });
  req.on('error', () => {
    first(false);
    finish();
  });
  req.end(body);
  return { request: req, done, firstEvent };
}

async function write(orders: Collection<Document>, ulid: string, step: number) {
  const status = STATES[step % STATES.length] as string;
  written.set(`${ulid} ${status}`, performance.now());
  await orders.updateOne({ ulid }, { $set: { fulfillment_status: status, updated_at: new Date() } });
}

/** Database and server CPU (% of one core) over `seconds`, with `perSecond` changes to `targets`. */
async function window(
  db: BenchDatabase,
  server: ServerProcess,
  orders: Collection<Document>,
  targets: readonly string[],
  perSecond: number,
  windowSeconds = seconds,
) {
  const dbPids = await db.serverPids();
  const before = { db: totalCpuMs(dbPids, true), server: totalCpuMs([server.pid]), at: performance.now() };
  let step = 0;
  const writes: Promise<void>[] = [];
  const until = before.at + windowSeconds * 1000;
  // On a fixed schedule (not one after another), so a slow write does not lower the rate.
  while (performance.now() < until) {
    if (perSecond > 0) {
      const due = before.at + (step * 1000) / perSecond;
      await sleep(Math.max(0, due - performance.now()));
      const ulid = targets[Math.floor(Math.random() * targets.length)] as string;
      writes.push(write(orders, ulid, step++));
    } else await sleep(250);
  }
  await Promise.all(writes);
  const elapsed = performance.now() - before.at;
  await sleep(2_000); // the last writes' events
  return {
    dbCpu: ((totalCpuMs(await db.serverPids(), true) - before.db) / elapsed) * 100,
    serverCpu: ((totalCpuMs([server.pid]) - before.server) / (elapsed + 2_000)) * 100,
    writes: step,
  };
}

const ms = (value: number) => `${Math.round(value)} ms`;

const db = await openBenchDatabase({
  spec: { seed: 7, products: 1_000, orders: Math.max(2_000, subscriptionCount + 500) },
  dbName: DB_NAME,
  dataDir: path.join('bench', '.data', 'live'),
  log,
});
let server: ServerProcess | undefined;
// Node writes one profile per thread (tsx's loader hooks run in a worker): a folder per run.
const profileDir = values.profile
  ? path.join('bench', '.data', 'live', 'profiles', new Date().toISOString().replace(/[:.]/g, '-'))
  : undefined;
const spawnedAt = performance.now();
let idleWindow: ProfileWindow | undefined;
try {
  if (profileDir) await mkdir(profileDir, { recursive: true });
  server = await startServerProcess('ours', {
    nodeFlags: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    env: {
      MONGODB_URI: db.uri,
      MONGODB_DB: DB_NAME,
      JWT_SECRET,
      PUBLIC_BASE_URL: 'http://127.0.0.1',
    },
    logDir: path.join('bench', '.data', 'live', 'logs'),
    // One support token holds every subscription: the per-customer bound is not what is measured.
    extraEnv: {
      LIVE_SUBSCRIPTIONS_PER_CUSTOMER: String(subscriptionCount + 1),
      LIVE_SUBSCRIPTIONS_PER_INSTANCE: String(subscriptionCount + 1),
    },
  });
  const token = await new SignJWT({ scope: 'orders:read:all' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('bench-support')
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  const orders = db.database.db.collection('orders');
  const ulids = (
    await orders
      .find({}, { projection: { ulid: 1 } })
      .sort({ ulid: -1 })
      .limit(subscriptionCount)
      .toArray()
  ).map((order) => String(order.ulid));
  const [one] = ulids as [string];

  log('1 subscriber');
  const single = openStream(server.origin, token, one);
  await single.firstEvent;
  const idle1 = await window(db, server, orders, ulids, 0);
  const loaded1 = await window(db, server, orders, ulids, rate);
  delays = [];
  written.clear();
  // Spaced past the feed's interval, so no state is coalesced away before it is sent.
  for (let step = 0; step < 15; step++) {
    await write(orders, one, step);
    await sleep(1_100 + Math.random() * 400);
  }
  await sleep(2_000);
  const latency1 = delays;
  delays = [];
  single.request.destroy();
  await single.done;

  const rssBefore = rssMb(server.pid) ?? NaN;
  log(`opening ${subscriptionCount} subscriptions`);
  const streams: Stream[] = [];
  let refused = 0;
  // In batches: each opening reads its order once, and a burst past the lookup lane's queue is
  // answered SERVICE_UNAVAILABLE (admission control), as a reconnect storm would be; those retry.
  for (let start = 0; start < ulids.length; start += 100) {
    let pending = ulids.slice(start, start + 100);
    while (pending.length > 0) {
      const batch = pending.map((ulid) => ({ ulid, stream: openStream(server!.origin, token, ulid) }));
      const opened = await Promise.all(batch.map(({ stream }) => stream.firstEvent));
      streams.push(...batch.filter((_, index) => opened[index]).map(({ stream }) => stream));
      pending = batch.filter((_, index) => !opened[index]).map(({ ulid }) => ulid);
      refused += pending.length;
    }
  }
  await sleep(3_000);
  const rssAfter = rssMb(server.pid) ?? NaN;
  log(`${streams.length} open (${refused} openings refused by admission control and retried); measuring`);
  // Just after opening, the heap still holds the openings' garbage: its major GC falls here.
  const afterOpening = await window(db, server, orders, ulids, 0);
  // Then the steady state, over at least one keep-alive interval, so every stream's ping is in it
  // once whatever its phase.
  const idleFrom = performance.now() - spawnedAt;
  const idleN = await window(db, server, orders, ulids, 0, Math.max(seconds, KEEP_ALIVE_SECONDS));
  idleWindow = { fromMs: idleFrom, toMs: performance.now() - spawnedAt };
  delays = [];
  written.clear();
  const loadedN = await window(db, server, orders, ulids, rate);
  const latencyN = delays;

  log('SIGTERM');
  const sigterm = performance.now();
  process.kill(server.pid, 'SIGTERM');
  await Promise.all(streams.map((stream) => stream.done));
  const endAllMs = performance.now() - sigterm;
  await server.stop();

  const row = (name: string, value: string) => console.log(`| ${name.padEnd(58)} | ${value.padStart(22)} |`);
  console.log(
    `\nlive orders, ${new Date().toISOString()}, ${subscriptionCount} subscriptions, ${rate} changes/s`,
  );
  console.log(`| ${'measure'.padEnd(58)} | ${'value'.padStart(22)} |\n|${'-'.repeat(60)}|${'-'.repeat(24)}|`);
  row('write → event, 1 subscriber: p50 / p99', `${ms(median(latency1))} / ${ms(percentile(latency1, 99))}`);
  row(
    `write → event, ${subscriptionCount} subscribers at ${rate}/s: p50 / p99 (n=${latencyN.length})`,
    `${ms(median(latencyN))} / ${ms(percentile(latencyN, 99))}`,
  );
  row(
    `server RSS: before → with ${subscriptionCount} open`,
    `${Math.round(rssBefore)} → ${Math.round(rssAfter)} MB`,
  );
  row(
    'server RSS per open subscription',
    `${(((rssAfter - rssBefore) * 1024) / subscriptionCount).toFixed(1)} KB`,
  );
  row('database CPU, idle: 1 subscriber / N', `${idle1.dbCpu.toFixed(1)} % / ${idleN.dbCpu.toFixed(1)} %`);
  row(
    `database CPU at ${rate} changes/s: 1 subscriber / N`,
    `${loaded1.dbCpu.toFixed(1)} % / ${loadedN.dbCpu.toFixed(1)} %`,
  );
  row(
    'server CPU, idle: 1 subscriber / N',
    `${idle1.serverCpu.toFixed(1)} % / ${idleN.serverCpu.toFixed(1)} %`,
  );
  row(`server CPU, idle, the ${seconds} s just after opening N`, `${afterOpening.serverCpu.toFixed(1)} %`);
  row(
    `server CPU at ${rate} changes/s: 1 subscriber / N`,
    `${loaded1.serverCpu.toFixed(1)} % / ${loadedN.serverCpu.toFixed(1)} %`,
  );
  row(
    `SIGTERM → all ${streams.length} ended (retry hint ${farewell.retryHint}, complete ${farewell.complete})`,
    ms(endAllMs),
  );
} finally {
  await server?.stop();
  await db.stop();
}

if (profileDir && idleWindow) {
  const file = await mainThreadProfile(profileDir);
  console.log(
    `\nCPU profile of the server with ${subscriptionCount} idle streams ` +
      `(${(idleWindow.fromMs / 1000).toFixed(1)}–${(idleWindow.toMs / 1000).toFixed(1)} s after spawn): ${file}\n`,
  );
  console.log(formatProfileSummary(summariseProfile(await readProfile(file), 20, idleWindow), 12));
}
