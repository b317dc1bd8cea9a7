import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { PRODUCTION_CONNECTION_CAPS } from '../src/config-env';
import { startRedis } from '../test/support/redis';
import { openBenchDatabase } from './database';
import { DATA_DIR } from './harness';
import { percentile } from './median';
import { loadText, peakRssMb, resetPeakRss, rssMb } from './proc';
import { BENCH_JWT_SECRET, buildBundles, startServerProcess, type ServerProcess } from './servers';

/**
 * Issue 36, rows 1–4 and 8, at the sizes the held-out run used, on two instances of the production
 * bundle (`npm run build`, `NODE_ENV=production`) sharing one Redis, on the bench's embedded
 * database (2,000 products and orders):
 *
 *   node --import tsx bench/hostile-streams.ts [--only 1,2,3,4,8] [--profile DIR]
 *
 * Row 1: 1,000 customers each send one batch of 10 subscriptions with `Accept: application/json`,
 * then the live-stream gauge and a new customer's stream. Row 2: 10 sockets with one customer's
 * token, each a subscription and then 100,000 pipelined `GET /healthz` (35 MB): the server's RSS,
 * and how soon a new client is answered after they leave. Row 3: 5 sockets from one address, each
 * 50,000 pipelined `GET /healthz`, beside 7 REST pages. Row 4: 10,200 streams (1,020 customers
 * from 51 loopback addresses) on one instance, beside 20 REST pages. Row 8: one token's streams on
 * both instances. Only the rate limits are lifted (one load generator); every other limit is
 * production's default. `--profile DIR` writes instance a's CPU profile there (read it with
 * bench/profile-summary.ts --from/--to).
 */

const { values: args } = parseArgs({
  options: { only: { type: 'string' }, profile: { type: 'string' } },
});
const runs = (row: string) => args.only === undefined || args.only.split(',').includes(row);
const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const METRICS_TOKEN = 'bench-metrics-token-of-some-length';
const SUBSCRIPTION = 'subscription { viewerOrders { ulid } }';
const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

const token = (sub: string) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));

async function liveGauge(server: ServerProcess): Promise<number | string> {
  try {
    const response = await fetch(`${server.origin}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    return Number(/^live_subscriptions (\d+)$/m.exec(await response.text())?.[1]);
  } catch (error) {
    return `unread (${(error as Error).message})`;
  }
}

/** Opens a stream and says whether its first bytes arrived (then drops it). */
async function streamOpens(server: ServerProcess, sub: string): Promise<number> {
  const controller = new AbortController();
  const response = await fetch(`${server.origin}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${await token(sub)}`,
    },
    body: JSON.stringify({ query: SUBSCRIPTION }),
    signal: controller.signal,
  });
  controller.abort();
  return response.status;
}

/** A raw connection that writes `head` and then `count` pipelined GET /healthz. */
async function pipeline(server: ServerProcess, count: number, head = ''): Promise<Socket> {
  const socket = connect(server.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  socket.write(head + HEALTHZ.repeat(count));
  return socket;
}

/** A page's time in ms; a failure counts as Infinity (it was not answered). */
async function timedMs(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(15_000) }).catch(() => undefined);
  if (response?.status !== 200) return Infinity;
  await response.arrayBuffer();
  return performance.now() - started;
}

async function timed(url: string): Promise<string> {
  const started = performance.now();
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(15_000) });
    await response.arrayBuffer();
    return `${response.status} in ${(performance.now() - started).toFixed(0)} ms`;
  } catch (error) {
    return `${(error as Error).name} after ${(performance.now() - started).toFixed(0)} ms`;
  }
}

async function rowOne([a]: ServerProcess[]) {
  const body = JSON.stringify(Array.from({ length: 10 }, () => ({ query: SUBSCRIPTION })));
  const before = await liveGauge(a!);
  const statuses = new Map<number, number>();
  const started = performance.now();
  for (let from = 0; from < 1_000; from += 20)
    await Promise.all(
      Array.from({ length: 20 }, async (_, n) => {
        const response = await fetch(`${a!.origin}/graphql`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${await token(`cus_row1_${from + n}`)}`,
          },
          body,
        });
        await response.arrayBuffer();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }),
    );
  await sleep(500);
  log(
    `row 1: 1,000 customers × a batch of 10 subscriptions (Accept: application/json) in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s, statuses ${JSON.stringify(Object.fromEntries(statuses))}; ` +
      `live_subscriptions ${before} → ${await liveGauge(a!)}; a new customer's stream: ${await streamOpens(a!, 'cus_row1_new')}`,
  );
}

async function rowTwo([a]: ServerProcess[]) {
  const subscription = JSON.stringify({ query: SUBSCRIPTION });
  const head =
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `Accept: text/event-stream\r\nAuthorization: Bearer ${await token('cus_row2')}\r\n` +
    `Content-Length: ${Buffer.byteLength(subscription)}\r\n\r\n${subscription}`;
  await sleep(1_000);
  const idle = rssMb(a!.pid)!;
  resetPeakRss(a!.pid);
  const sockets = await Promise.all(Array.from({ length: 10 }, () => pipeline(a!, 100_000, head)));
  const during = await timed(`${a!.origin}/healthz`);
  await sleep(5_000);
  const open = sockets.filter((socket) => !socket.destroyed).length;
  for (const socket of sockets) socket.destroy();
  const left = performance.now();
  const after = await timed(`${a!.origin}/healthz`);
  const answeredIn = performance.now() - left;
  await sleep(10_000);
  log(
    `row 2: 10 sockets × (a subscription + 100,000 pipelined GET /healthz): RSS idle ${idle.toFixed(0)} MB, ` +
      `peak ${peakRssMb(a!.pid)!.toFixed(0)} MB, 10 s after they left ${rssMb(a!.pid)!.toFixed(0)} MB; ` +
      `sockets still open after 5 s: ${open}; a new client during: ${during}; just after they left: ${after} ` +
      `(${answeredIn.toFixed(0)} ms); live_subscriptions after ${await liveGauge(a!)}`,
  );
}

/** Row 3, five times after a warm-up: quiet pages, then the same pages beside the pipeliners. */
async function rowThree([a]: ServerProcess[]) {
  const pages = () =>
    Promise.all(Array.from({ length: 7 }, (_, n) => timedMs(`${a!.origin}/api/v1/products?page=${n + 1}`)));
  await pages();
  const quiet: number[] = [];
  const beside: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    quiet.push(...(await pages()));
    const sockets = await Promise.all(Array.from({ length: 5 }, () => pipeline(a!, 50_000)));
    beside.push(...(await pages()));
    for (const socket of sockets) socket.destroy();
    await sleep(500);
  }
  const spread = (times: number[]) =>
    `p50 ${percentile(times, 50).toFixed(0)} ms, p99 ${percentile(times, 99).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms`;
  log(
    `row 3: 5 sockets × 50,000 pipelined GET /healthz, 5 rounds of 7 REST pages beside them: ${spread(beside)} ` +
      `(the same pages without them: ${spread(quiet)})`,
  );
}

/** A raw stream from `localAddress`: resolves with its status once the head arrives (0: closed first). */
function rawStream(
  server: ServerProcess,
  localAddress: string,
  bearer: string,
): Promise<{ socket: Socket; status: number }> {
  const body = JSON.stringify({ query: SUBSCRIPTION });
  return new Promise((resolve) => {
    const socket = connect({ port: server.port, host: '127.0.0.1', localAddress });
    socket.on('error', () => resolve({ socket, status: 0 }));
    socket.once('close', () => resolve({ socket, status: 0 }));
    socket.once('data', (chunk: Buffer) =>
      resolve({ socket, status: Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'))?.[1] ?? 0) }),
    );
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Accept: text/event-stream\r\nAuthorization: ${bearer}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}

async function rowFour([a]: ServerProcess[]) {
  const opened: { socket: Socket; status: number }[] = [];
  const started = performance.now();
  for (let customer = 0; customer < 1_020; customer += 20) {
    const batch = await Promise.all(
      Array.from({ length: 20 }, async (_, n) => {
        const bearer = `Bearer ${await token(`cus_row4_${customer + n}`)}`;
        const address = `127.0.0.${2 + ((customer + n) % 51)}`;
        return Promise.all(Array.from({ length: 10 }, () => rawStream(a!, address, bearer)));
      }),
    );
    opened.push(...batch.flat());
  }
  const statuses = new Map<number, number>();
  for (const { socket, status } of opened) {
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    // A refused client goes away (an idle connection kept open is the plain connection attack,
    // bounded by the per-address and per-instance caps whatever it asked).
    if (status !== 200) socket.destroy();
  }
  await sleep(1_000);
  const rest = await Promise.all(
    Array.from({ length: 20 }, (_, n) => timed(`${a!.origin}/api/v1/products?page=${n + 1}`)),
  );
  log(
    `row 4: 10,200 streams asked (1,020 customers, 51 addresses) in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
      `statuses ${JSON.stringify(Object.fromEntries(statuses))}, live_subscriptions ${await liveGauge(a!)}, ` +
      `RSS ${rssMb(a!.pid)!.toFixed(0)} MB; 20 REST pages beside them: ${rest.filter((line) => line.startsWith('200')).length} × 200 (${rest[0]}, …, ${rest.at(-1)})`,
  );
  for (const { socket } of opened) socket.destroy();
  await sleep(2_000);
}

async function rowEight(servers: ServerProcess[]) {
  const opened: Record<string, number[]> = {};
  const streams: AbortController[] = [];
  const bearer = `Bearer ${await token('cus_row8')}`;
  for (const server of servers) {
    opened[server.origin] = [];
    for (let n = 0; n < 10; n++) {
      const controller = new AbortController();
      streams.push(controller);
      const response = await fetch(`${server.origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: bearer },
        body: JSON.stringify({ query: SUBSCRIPTION }),
        signal: controller.signal,
      });
      const first = await response.body
        ?.getReader()
        .read()
        .catch(() => undefined);
      const refused = /LIVE_SUBSCRIPTION_LIMIT|TOO_MANY|limit/i.test(new TextDecoder().decode(first?.value));
      opened[server.origin]!.push(response.status === 200 && !refused ? 1 : 0);
    }
  }
  const counts = Object.values(opened).map((list) => list.reduce((sum, one) => sum + one, 0));
  log(`row 8: one token, 10 streams asked on each of two instances: ${counts.join(' + ')} open`);
  for (const controller of streams) controller.abort();
}

// The production bundle (`npm run build`, run by `npm run start:production`), built for this run.
const bundle = buildBundles(['ours'], log).get('ours');

const db = await openBenchDatabase({
  spec: { seed: 36, products: 2_000, orders: 2_000 },
  dbName: 'storefront_hostile_streams',
  dataDir: path.join(DATA_DIR, 'db'),
  log,
});
const redis = await startRedis();
const servers: ServerProcess[] = [];
try {
  for (const name of ['a', 'b'])
    servers.push(
      await startServerProcess('ours', {
        env: {
          MONGODB_URI: db.uri,
          MONGODB_DB: db.dbName,
          JWT_SECRET: BENCH_JWT_SECRET,
          PUBLIC_BASE_URL: 'http://127.0.0.1:4000',
          METRICS_TOKEN,
        },
        logDir: path.join(DATA_DIR, `streams-${name}`),
        entry: bundle,
        ...(name === 'a' && args.profile
          ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${path.resolve(args.profile)}`] }
          : {}),
        extraEnv: {
          REDIS_URL: redis.url,
          // Production's cap per address (the bench's servers lift it for their one load generator).
          MAX_CONNECTIONS_PER_ADDRESS: String(PRODUCTION_CONNECTION_CAPS.perAddress),
          ...(db.embedded ? { CHANGE_FEED_POSTGRES_URL: db.embedded.postgresUrl } : {}),
        },
      }),
    );
  log(`two instances on ${db.dbName}; load ${loadText()}`);
  if (runs('1')) await rowOne(servers);
  if (runs('2')) await rowTwo(servers);
  if (runs('3')) await rowThree(servers);
  if (runs('4')) await rowFour(servers);
  if (runs('8')) await rowEight(servers);
  log(`load ${loadText()}`);
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  await redis.stop();
  await db.stop();
}
