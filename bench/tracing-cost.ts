import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startEmbeddedDatabase } from '../src/engine';
import { connectDatabase, ensureIndexes } from '../src/db/mongo';
import { loadFixtures } from '../seed/load';
import { cpuMs } from './proc';
import { freeLoopbackPort } from '../src/engine/guarded-child';
import { median } from './median';
import { SERVER_NODE_FLAGS } from '../scripts/node-flags';

/**
 * CPU per request of OpenTelemetry tracing on versus off (issue 12). One embedded FerretDB with the
 * fixtures; per round a fresh server process with tracing off and one with it on (exporting to a
 * receiver in this process that reads and drops the spans); a fixed number of requests with
 * autocannon on 127.0.0.1; the server's user+system CPU from /proc/<pid>/stat before and after
 * (after the exporter has flushed). Medians of the rounds.
 *
 *   node --import tsx bench/tracing-cost.ts [--requests 2000] [--rounds 3] [--protocol http/protobuf]
 *     [--ratio 0.1]
 */

const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    protocol: { type: 'string', default: 'http/protobuf' },
    // OTEL_TRACES_SAMPLER_ARG of a parent-based trace id ratio sampler; default: every trace.
    ratio: { type: 'string' },
  },
});
const REQUESTS = Math.min(Number(args.requests), 20_000);
const ROUNDS = Math.min(Number(args.rounds), 9);
const CONNECTIONS = Math.min(Number(args.connections), 64);
const BSP_DELAY_MS = 200;

interface Workload {
  label: string;
  path: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

const WORKLOADS: Workload[] = [
  { label: 'REST product page', path: '/api/v1/products?per_page=15', method: 'GET' },
  {
    label: 'GraphQL products',
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query:
        'query Bench { products(first: 15) { edges { node { id name variant { price { formatted } } } } } }',
    }),
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startReceiver() {
  let exports = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats: () => ({ exports, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freeLoopbackPort();
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(MONGODB_|JWT_|PORT$|OTEL_|NODE_OPTIONS$)/.test(name)),
  );
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'scripts/start.ts'], {
    env: { ...inherited, ...env, NODE_ENV: 'test', HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    const up = await fetch(`${origin}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) return { child, origin };
    if (Date.now() > deadline) throw new Error('the server did not start within 60 s');
    await sleep(100);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function drive(origin: string, workload: Workload, amount: number) {
  const result = await autocannon({
    url: `${origin}${workload.path}`,
    method: workload.method,
    headers: workload.headers ?? {},
    ...(workload.body === undefined ? {} : { body: workload.body }),
    connections: CONNECTIONS,
    amount,
    timeout: 10,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${workload.label}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return result;
}

/** CPU ms per request of one server process for one workload. */
async function measure(
  tracing: boolean,
  workload: Workload,
  uri: string,
  dbName: string,
  receiverUrl: string,
) {
  const env: Record<string, string> = {
    MONGODB_URI: uri,
    MONGODB_DB: dbName,
    JWT_SECRET: 'bench-secret-that-is-at-least-32-characters',
    SEED_FIXTURES: 'false',
    LOG_LEVEL: 'info',
    RESPONSE_CACHE_TTL_MS: '0',
    COMPRESSION_MIN_BYTES: '0',
  };
  if (tracing) {
    Object.assign(env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: args.protocol,
      OTEL_BSP_SCHEDULE_DELAY: String(BSP_DELAY_MS),
      // Room for every span of the run: a dropped span would be cost not measured.
      OTEL_BSP_MAX_QUEUE_SIZE: '100000',
      ...(args.ratio === undefined
        ? {}
        : { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: args.ratio }),
    });
  }
  const { child, origin } = await startServer(env);
  try {
    await drive(origin, workload, 500); // warm-up: JIT, pools, caches
    await sleep(BSP_DELAY_MS * 3);
    const before = cpuMs(child.pid as number) as number;
    const result = await drive(origin, workload, REQUESTS);
    await sleep(BSP_DELAY_MS * 5); // the exporter's last batches are part of the cost
    const after = cpuMs(child.pid as number) as number;
    return { cpuMsPerRequest: (after - before) / REQUESTS, rps: result.requests.average };
  } finally {
    await stop(child);
  }
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-tracing-bench-'));
const embedded = await startEmbeddedDatabase({ dataDir: path.join(dataDir, 'db') });
const receiver = await startReceiver();
try {
  const dbName = 'tracing_bench';
  const database = await connectDatabase({ uri: embedded.uri, dbName });
  await ensureIndexes(database.db);
  await loadFixtures(database.db);
  await database.close();

  console.log(
    `tracing cost: ${REQUESTS} requests × ${ROUNDS} rounds per cell, ${CONNECTIONS} connections, ` +
      `exporter ${args.protocol}, sampled ${args.ratio ?? '1'}, logs at info, response cache and compression off`,
  );
  for (const workload of WORKLOADS) {
    const off: number[] = [];
    const on: number[] = [];
    const rpsOff: number[] = [];
    const rpsOn: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating order, so drift on a shared machine falls on both sides.
      for (const tracing of round % 2 === 0 ? [false, true] : [true, false]) {
        const { cpuMsPerRequest, rps } = await measure(tracing, workload, embedded.uri, dbName, receiver.url);
        (tracing ? on : off).push(cpuMsPerRequest);
        (tracing ? rpsOn : rpsOff).push(rps);
      }
    }
    const offMs = median(off);
    const onMs = median(on);
    console.log(
      `${workload.label.padEnd(18)} off ${offMs.toFixed(3)} ms CPU/request (${median(rpsOff).toFixed(0)} req/s)  ` +
        `on ${onMs.toFixed(3)} ms (${median(rpsOn).toFixed(0)} req/s)  ` +
        `+${(onMs - offMs).toFixed(3)} ms, +${(((onMs - offMs) / offMs) * 100).toFixed(0)}%` +
        `   [off ${off.map((value) => value.toFixed(3)).join(' ')} | on ${on.map((value) => value.toFixed(3)).join(' ')}]`,
    );
  }
  const { exports, bytes } = receiver.stats();
  console.log(`receiver: ${exports} exports, ${(bytes / 1_048_576).toFixed(1)} MiB`);
} finally {
  await receiver.close();
  await embedded.stop();
  await rm(dataDir, { recursive: true, force: true });
}
