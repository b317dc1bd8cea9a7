import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import type { OrderDoc } from '../src/db/documents';
import { openBenchDatabase, type BenchDatabase, type SeedReport } from './database';
import { cpuMs, peakRssMb, resetPeakRss, rssMb, totalCpuMs } from './proc';
import { formatProfileSummary, readProfile, summariseProfile } from './profile-summary';
import { buildScenarios, type RequestSpec, type Scenario } from './scenarios';
import {
  SERVER_IDS,
  SERVER_LABELS,
  startServerProcess,
  type ServerId,
  type ServerProcess,
  type SharedServerEnv,
} from './servers';
import { median } from './median';

const USAGE = `Usage: npm run bench -- [options]

Seeds a benchmark database with the generator, starts every server as its own child process on
127.0.0.1, drives each with autocannon and prints a table per scenario (medians of the rounds).
Results are written to bench/results/<timestamp>.json (git-ignored).

  --seed S            Generator seed (default 42)
  --products N        Products to generate (default 10000)
  --orders M          Orders to generate (default 50000)
  --duration SEC      Measured seconds per server per scenario per round (default 5)
  --warmup SEC        Unmeasured load before a server's first round of a scenario (default 1)
  --rounds R          Rounds; servers are interleaved in each, medians are reported (default 3)
  --connections C     Concurrent connections of the load generator (default 10)
  --scenarios a,b     Only these scenario ids (or id prefixes, e.g. rest,gql-order)
  --servers a,b       Only these servers: ${SERVER_IDS.join(', ')}
  --smoke             Tiny data set, 1 s runs, 1 round, 5 scenarios covering every server: checks
                      the harness in well under a minute
  --profile ID        Profile one scenario with node --cpu-prof instead of benchmarking, then print
                      the top functions by self time (server: --profile-server, default ours)
  --profile-server S  The server to profile (default ours)
  -h, --help          This help

Data lives in bench/.data (git-ignored) and is reused while seed and sizes match. The database's
own CPU is reported apart ("DB CPU ms/req"); each server's cost is its CPU milliseconds per
request, which a slow database does not hide (docs/benchmarks.md).`;

/** Every server and both APIs, in under a minute on two busy cores. */
const SMOKE_SCENARIOS = ['rest-products-p1', 'rest-search', 'rest-order', 'gql-product-page', 'gql-order'];
const JWT_SECRET = 'bench-secret-of-at-least-32-characters-000';
const PUBLIC_BASE_URL = 'http://127.0.0.1:4000';
const PER_PAGE = 15;
const LIST_SEARCH = 'gift';
const SEARCH_TERM = 'soundwave';
const BENCH_DIR = path.join(process.cwd(), 'bench');
const DATA_DIR = path.join(BENCH_DIR, '.data');
const RESULTS_DIR = path.join(BENCH_DIR, 'results');

interface Options {
  seed: number;
  products: number;
  orders: number;
  duration: number;
  warmup: number;
  rounds: number;
  connections: number;
  scenarios: string[] | null;
  servers: ServerId[];
  smoke: boolean;
  profile: string | null;
  profileServer: ServerId;
}

class UsageError extends Error {}

function numberOption(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  integer = true,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw.replace(/_/g, ''));
  if (!Number.isFinite(value) || value < min || (integer && !Number.isSafeInteger(value))) {
    throw new UsageError(`--${name} must be ${integer ? 'an integer' : 'a number'} ≥ ${min}, got "${raw}"`);
  }
  return value;
}

function serverList(raw: string | undefined, name: string): ServerId[] | null {
  if (raw === undefined) return null;
  const ids = raw.split(',').map((id) => id.trim());
  const unknown = ids.filter((id) => !(SERVER_IDS as readonly string[]).includes(id));
  if (unknown.length > 0) throw new UsageError(`--${name}: unknown server ${unknown.join(', ')}`);
  return ids as ServerId[];
}

function parseOptions(argv: string[]): Options | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        seed: { type: 'string' },
        products: { type: 'string' },
        orders: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        rounds: { type: 'string' },
        connections: { type: 'string' },
        scenarios: { type: 'string' },
        servers: { type: 'string' },
        smoke: { type: 'boolean', default: false },
        profile: { type: 'string' },
        'profile-server': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) return 'help';
  const smoke = v.smoke ?? false;
  return {
    seed: numberOption('seed', v.seed, 42, 0),
    products: numberOption('products', v.products, smoke ? 300 : 10_000, 1),
    orders: numberOption('orders', v.orders, smoke ? 200 : 50_000, 1),
    duration: numberOption('duration', v.duration, smoke ? 1 : 5, 0.5, false),
    warmup: numberOption('warmup', v.warmup, smoke ? 0 : 1, 0, false),
    rounds: numberOption('rounds', v.rounds, smoke ? 1 : 3, 1),
    connections: numberOption('connections', v.connections, 10, 1),
    scenarios: v.scenarios ? v.scenarios.split(',').map((id) => id.trim()) : smoke ? SMOKE_SCENARIOS : null,
    servers: serverList(v.servers, 'servers') ?? [...SERVER_IDS],
    smoke,
    profile: v.profile ?? null,
    profileServer: serverList(v['profile-server'], 'profile-server')?.[0] ?? 'ours',
  };
}

const DATABASE_LABELS = {
  embedded: 'the embedded database (FerretDB 2.5 + DocumentDB 0.106 on PostgreSQL 15)',
  uri: 'MONGODB_URI',
} as const;

const log = (line: string) => console.error(`[bench] ${line}`);

// ------------------------------------------------------------------------------ statistics

interface RunMeasurement {
  round: number;
  scenario: string;
  server: ServerId;
  responses: number;
  non2xx: number;
  errors: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
  dbCpuMsPerRequest: number | null;
  peakRssMb: number | null;
  /** Load generator (this process) CPU per request, for context. */
  loadGenCpuMsPerRequest: number;
}

interface Summary {
  server: ServerId;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
  dbCpuMsPerRequest: number | null;
  /** Highest peak of the rounds. */
  peakRssMb: number | null;
  responses: number;
  non2xx: number;
  errors: number;
}

function summarise(server: ServerId, runs: RunMeasurement[]): Summary {
  const db = runs.map((run) => run.dbCpuMsPerRequest).filter((value): value is number => value !== null);
  const rss = runs.map((run) => run.peakRssMb).filter((value): value is number => value !== null);
  return {
    server,
    rps: median(runs.map((run) => run.rps)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    cpuMsPerRequest: median(runs.map((run) => run.cpuMsPerRequest)),
    dbCpuMsPerRequest: db.length > 0 ? median(db) : null,
    peakRssMb: rss.length > 0 ? Math.max(...rss) : null,
    responses: runs.reduce((sum, run) => sum + run.responses, 0),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

// ------------------------------------------------------------------------------ load

async function drive(origin: string, request: RequestSpec, seconds: number, connections: number) {
  return autocannon({
    url: `${origin}${request.path}`,
    method: request.method,
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
    connections,
    duration: seconds,
    timeout: 30,
  });
}

async function measure(
  server: ServerProcess,
  db: BenchDatabase,
  scenario: Scenario,
  request: RequestSpec,
  round: number,
  options: Options,
): Promise<RunMeasurement> {
  resetPeakRss(server.pid);
  const cpuBefore = cpuMs(server.pid);
  // Read the tree at both ends: backends that started or ended meanwhile count too (bench/proc.ts).
  const dbBefore = totalCpuMs(await db.serverPids(), true);
  const selfBefore = process.cpuUsage();
  const result = await drive(server.origin, request, options.duration, options.connections);
  const self = process.cpuUsage(selfBefore);
  if (process.env.BENCH_DEBUG)
    console.error(JSON.stringify({ ...result, latency: undefined, throughput: undefined }));
  const cpuAfter = cpuMs(server.pid);
  const dbPids = await db.serverPids();
  const dbAfter = totalCpuMs(dbPids, true);
  if (cpuBefore === null || cpuAfter === null)
    throw new Error(`${SERVER_LABELS[server.id]} is gone (see ${server.logFile})`);
  const responses = result['2xx'] + result.non2xx;
  const per = (ms: number) => (responses > 0 ? ms / responses : Number.NaN);
  return {
    round,
    scenario: scenario.id,
    server: server.id,
    responses,
    non2xx: result.non2xx,
    errors: result.errors,
    seconds: result.duration,
    rps: responses / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuMsPerRequest: per(cpuAfter - cpuBefore),
    dbCpuMsPerRequest: dbPids.length > 0 ? per(dbAfter - dbBefore) : null,
    peakRssMb: peakRssMb(server.pid),
    loadGenCpuMsPerRequest: per((self.user + self.system) / 1000),
  };
}

// ------------------------------------------------------------------------------ response checks

interface ScenarioCheck {
  server: ServerId;
  status: number;
  bytes: number;
  ok: boolean;
  note: string;
}

async function fetchOnce(origin: string, request: RequestSpec): Promise<{ status: number; text: string }> {
  const response = await fetch(`${origin}${request.path}`, {
    method: request.method,
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  return { status: response.status, text: await response.text() };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One request per server before measuring: right status, no GraphQL errors, same data as ours. */
async function checkScenario(
  scenario: Scenario,
  servers: Map<ServerId, ServerProcess>,
): Promise<ScenarioCheck[]> {
  const replies = new Map<ServerId, { status: number; text: string }>();
  for (const [id, request] of Object.entries(scenario.requests) as [ServerId, RequestSpec][]) {
    const server = servers.get(id);
    if (server) replies.set(id, await fetchOnce(server.origin, request));
  }
  const baseline = replies.get('baseline');
  const ours = replies.get('ours');
  const oursData = ours ? (parseJson(ours.text) as { data?: unknown } | undefined) : undefined;
  const baselineItems = baseline
    ? (parseJson(baseline.text) as { data?: unknown[] } | undefined)?.data
    : undefined;
  const checks: ScenarioCheck[] = [];
  for (const [id, reply] of replies) {
    const body = parseJson(reply.text) as Record<string, unknown> | undefined;
    let ok = reply.status === 200 && body !== undefined;
    let note = '';
    if (ok && scenario.api === 'graphql' && id !== 'baseline') {
      if (body?.errors) {
        ok = false;
        note = `GraphQL errors: ${JSON.stringify(body.errors).slice(0, 200)}`;
      } else if (id !== 'ours') {
        note =
          JSON.stringify(body?.data) === JSON.stringify(oursData?.data)
            ? 'same data as ours'
            : 'DATA DIFFERS from ours';
      }
    } else if (ok && scenario.api === 'rest' && id.startsWith('ours') && baseline) {
      note = reply.text === baseline.text ? 'bytes identical to baseline' : 'BYTES DIFFER from baseline';
    } else if (ok && id === 'sofa') {
      const items = (body as { items?: unknown[] } | undefined)?.items;
      note =
        Array.isArray(items) && Array.isArray(baselineItems) && items.length === baselineItems.length
          ? `${items.length} items, as baseline`
          : 'ITEM COUNT DIFFERS from baseline';
    }
    if (!ok && !note) note = `status ${reply.status}: ${reply.text.slice(0, 200)}`;
    checks.push({ server: id, status: reply.status, bytes: Buffer.byteLength(reply.text), ok, note });
  }
  return checks;
}

// ------------------------------------------------------------------------------ report

const fixed = (value: number | null, digits: number) =>
  value === null || !Number.isFinite(value) ? '—' : value.toFixed(digits);
const ratio = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—';

/** A Markdown table: `align` per column is `l` (left) or `r` (right) or `c` (centre). */
function markdownTable(header: string[], align: string, rows: string[][]): string {
  const rule = [...align].map((side) => (side === 'r' ? '-:' : side === 'c' ? ':-:' : '---'));
  return [header, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function scenarioTable(scenario: Scenario, summaries: Summary[], checks: ScenarioCheck[]): string {
  const ours = summaries.find((summary) => summary.server === 'ours');
  const rows = summaries.map((summary) => {
    const check = checks.find((entry) => entry.server === summary.server);
    const isOurs = summary.server === 'ours';
    return [
      isOurs ? `**${SERVER_LABELS[summary.server]}**` : SERVER_LABELS[summary.server],
      fixed(summary.rps, 0),
      fixed(summary.p50Ms, 1),
      fixed(summary.p99Ms, 1),
      fixed(summary.cpuMsPerRequest, 3),
      fixed(summary.dbCpuMsPerRequest, 2),
      fixed(summary.peakRssMb, 0),
      isOurs || !ours ? '' : ratio(ours.cpuMsPerRequest, summary.cpuMsPerRequest),
      isOurs || !ours ? '' : ratio(ours.rps, summary.rps),
      check ? String(check.bytes) : '',
      [
        check?.note ?? '',
        summary.non2xx + summary.errors > 0 ? `${summary.non2xx} non-2xx, ${summary.errors} errors` : '',
      ]
        .filter(Boolean)
        .join('; '),
    ];
  });
  const header = ['server', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'DB CPU ms/req', 'peak RSS MB'];
  header.push('ours÷this CPU/req', 'ours÷this req/s', 'bytes', 'check');
  return `### ${scenario.title}\n\n${markdownTable(header, 'lrrrrrrrrrl', rows)}`;
}

interface TargetRow {
  target: string;
  scenario: string;
  value: string;
  limit: string;
  met: boolean | null;
}

function targetRows(scenarios: Scenario[], results: Map<string, Summary[]>): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const scenario of scenarios) {
    const summaries = results.get(scenario.id) ?? [];
    const get = (id: ServerId) => summaries.find((summary) => summary.server === id);
    const ours = get('ours');
    const baseline = get('baseline');
    if (!ours) continue;
    if (baseline) {
      const limit = scenario.api === 'rest' ? 1.3 : 1.6;
      const value = ours.cpuMsPerRequest / baseline.cpuMsPerRequest;
      rows.push({
        target: 'CPU/req ours÷baseline',
        scenario: scenario.id,
        value: `${value.toFixed(2)}×`,
        limit: `≤ ${limit}×`,
        met: Number.isFinite(value) ? value <= limit : null,
      });
      const p99 = ours.p99Ms / baseline.p99Ms;
      rows.push({
        target: 'p99 ours÷baseline',
        scenario: scenario.id,
        value: `${p99.toFixed(2)}×`,
        limit: '≤ 1.5×',
        met: Number.isFinite(p99) ? p99 <= 1.5 : null,
      });
    }
    const peers = summaries.filter(
      (summary) => !summary.server.startsWith('ours') && summary.server !== 'baseline',
    );
    for (const peer of peers) {
      const value = ours.cpuMsPerRequest / peer.cpuMsPerRequest;
      rows.push({
        target: `CPU/req ours÷${peer.server}`,
        scenario: scenario.id,
        value: `${value.toFixed(2)}×`,
        limit: '< 1×',
        met: Number.isFinite(value) ? value < 1 : null,
      });
    }
    const cached = get('ours-cached');
    if (cached) {
      const value = cached.rps / ours.rps;
      const limit = scenario.api === 'rest' ? 5 : 3;
      rows.push({
        target: 'req/s cached÷uncached',
        scenario: scenario.id,
        value: `${value.toFixed(1)}×`,
        limit: `≥ ${limit}×`,
        met: Number.isFinite(value) ? value >= limit : null,
      });
    }
    if (ours.peakRssMb !== null) {
      rows.push({
        target: 'peak RSS ours',
        scenario: scenario.id,
        value: `${ours.peakRssMb.toFixed(0)} MB`,
        limit: '< 200 MB',
        met: ours.peakRssMb < 200,
      });
    }
  }
  return rows;
}

function targetTable(rows: TargetRow[]): string {
  return markdownTable(
    ['target', 'scenario', 'value', 'limit', 'met'],
    'llrrc',
    rows.map((row) => [
      row.target,
      row.scenario,
      row.value,
      row.limit,
      row.met === null ? '?' : row.met ? 'yes' : '**no**',
    ]),
  );
}

interface IdleReading {
  server: ServerId | 'database';
  /** CPU the process burns with no requests (timers, metrics, GC), ms per second. */
  cpuMsPerSecond: number;
  rssMb: number | null;
}

/** Each process's CPU and memory with no load: its background work and its resting size. */
async function measureIdle(servers: Map<ServerId, ServerProcess>, db: BenchDatabase, seconds: number) {
  const dbPids = await db.serverPids();
  const before = new Map([...servers].map(([id, server]) => [id, cpuMs(server.pid) ?? 0]));
  const dbBefore = totalCpuMs(dbPids, true);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const readings: IdleReading[] = [...servers].map(([id, server]) => ({
    server: id,
    cpuMsPerSecond: ((cpuMs(server.pid) ?? 0) - (before.get(id) ?? 0)) / seconds,
    rssMb: rssMb(server.pid),
  }));
  if (dbPids.length > 0) {
    readings.push({
      server: 'database',
      cpuMsPerSecond: (totalCpuMs(await db.serverPids(), true) - dbBefore) / seconds,
      rssMb: dbPids.reduce((sum, pid) => sum + (rssMb(pid) ?? 0), 0),
    });
  }
  return readings;
}

function idleTable(readings: IdleReading[]): string {
  return markdownTable(
    ['process', 'idle CPU ms/s', 'RSS MB'],
    'lrr',
    readings.map((row) => [
      row.server === 'database' ? 'database' : SERVER_LABELS[row.server],
      fixed(row.cpuMsPerSecond, 1),
      fixed(row.rssMb, 0),
    ]),
  );
}

function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: os.loadavg().map((load) => Number(load.toFixed(2))),
  };
}

function timestamp(date: Date): string {
  return date
    .toISOString()
    .replace(/[:.]/g, '-')
    .replace(/-\d{3}Z$/, 'Z');
}

// ------------------------------------------------------------------------------ main

async function scenarioData(db: BenchDatabase, options: Options) {
  const orders = db.database.db.collection<OrderDoc>('orders');
  const order = await orders.findOne(
    { id: Math.max(1, Math.ceil(options.orders / 2)) },
    { projection: { _id: 0 } },
  );
  if (!order) throw new Error('the benchmark database has no orders');
  const orderToken = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(order.customer_id)
    .setIssuedAt()
    .setExpirationTime('12h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  return {
    products: options.products,
    perPage: PER_PAGE,
    orderUlid: order.ulid,
    orderToken,
    listSearch: LIST_SEARCH,
    searchTerm: SEARCH_TERM,
  };
}

function selectScenarios(all: Scenario[], options: Options): Scenario[] {
  const wanted = options.profile ? [options.profile] : options.scenarios;
  const chosen = wanted
    ? all.filter((scenario) =>
        wanted.some(
          (id) => scenario.id === id || scenario.id.startsWith(`${id}-`) || scenario.id.startsWith(id),
        ),
      )
    : all;
  if (chosen.length === 0)
    throw new UsageError(
      `no scenario matches ${wanted?.join(', ')}; known: ${all.map((s) => s.id).join(', ')}`,
    );
  const allowed = new Set<ServerId>(options.profile ? [options.profileServer] : options.servers);
  return chosen
    .map((scenario) => ({
      ...scenario,
      requests: Object.fromEntries(
        Object.entries(scenario.requests).filter(([id]) => allowed.has(id as ServerId)),
      ) as Scenario['requests'],
    }))
    .filter((scenario) => Object.keys(scenario.requests).length > 0);
}

async function startServers(ids: ServerId[], env: SharedServerEnv, nodeFlags: string[] = []) {
  const servers = new Map<ServerId, ServerProcess>();
  const logDir = path.join(DATA_DIR, 'logs');
  const started = performance.now();
  // In parallel: start-up is not measured, and one at a time takes half a minute on two cores.
  const results = await Promise.allSettled(
    ids.map((id) => startServerProcess(id, { env, logDir, nodeFlags })),
  );
  for (const result of results) if (result.status === 'fulfilled') servers.set(result.value.id, result.value);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    throw failed.reason;
  }
  for (const server of servers.values())
    log(`${SERVER_LABELS[server.id]}: pid ${server.pid}, ${server.origin}`);
  log(`servers started in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return servers;
}

/** The main thread's profile: the one whose code includes our src/ (else the biggest). */
async function mainThreadProfile(folder: string): Promise<string> {
  let best: { file: string; score: number } | undefined;
  for (const name of await readdir(folder)) {
    if (!name.endsWith('.cpuprofile')) continue;
    const file = path.join(folder, name);
    const profile = await readProfile(file);
    const ours = profile.nodes.filter((node) => node.callFrame.url.includes('/src/')).length;
    const score = ours * 1e9 + profile.samples.length;
    if (!best || score > best.score) best = { file, score };
  }
  if (!best) throw new Error(`no .cpuprofile was written in ${folder}`);
  return best.file;
}

async function runProfile(options: Options, scenario: Scenario, env: SharedServerEnv, db: BenchDatabase) {
  const id = options.profileServer;
  const request = scenario.requests[id];
  if (!request) throw new UsageError(`${id} does not take part in ${scenario.id}`);
  // Node writes one profile per thread (tsx's loader hooks run in a worker): a folder per run.
  const profileDir = path.join(DATA_DIR, 'profiles', `${id}-${scenario.id}-${timestamp(new Date())}`);
  await mkdir(profileDir, { recursive: true });
  const spawnedAt = performance.now();
  const servers = await startServers([id], env, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
  const server = servers.get(id) as ServerProcess;
  let window: { fromMs: number; toMs: number };
  let responses = 0;
  try {
    if (options.warmup > 0) await drive(server.origin, request, options.warmup, options.connections);
    const from = performance.now() - spawnedAt;
    const run = await measure(server, db, scenario, request, 1, options);
    window = { fromMs: from, toMs: performance.now() - spawnedAt };
    responses = run.responses;
    log(
      `${run.responses} responses, ${run.rps.toFixed(0)} req/s, ${run.cpuMsPerRequest.toFixed(3)} CPU ms/req (profiler on)`,
    );
  } finally {
    await server.stop();
  }
  const file = await mainThreadProfile(profileDir);
  // Only the measured run: start-up (tsx compiling, schema building) and warm-up are left out.
  const summary = summariseProfile(await readProfile(file), 15, window);
  const text = [
    `## CPU profile: ${SERVER_LABELS[id]}, ${scenario.title}`,
    '',
    `Profile: ${path.relative(process.cwd(), file)}, samples of the measured ${options.duration} s run only ` +
      `(from ${(window.fromMs / 1000).toFixed(1)} s to ${(window.toMs / 1000).toFixed(1)} s after spawn), ` +
      `${options.connections} connections, after ${options.warmup} s of warm-up.`,
    '',
    formatProfileSummary(summary, 12, responses),
  ].join('\n');
  console.log(text);
  await mkdir(RESULTS_DIR, { recursive: true });
  const out = path.join(RESULTS_DIR, `profile-${id}-${scenario.id}-${timestamp(new Date())}.md`);
  await writeFile(out, `${text}\n`);
  log(`summary written to ${path.relative(process.cwd(), out)}`);
}

async function main(): Promise<void> {
  let options: Options | 'help';
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    throw error;
  }
  if (options === 'help') {
    console.log(USAGE);
    return;
  }

  const startedAt = new Date();
  const loadAtStart = os.loadavg().map((load) => Number(load.toFixed(2)));
  const dbName = options.smoke ? 'storefront_bench_smoke' : 'storefront_bench';
  const db = await openBenchDatabase({
    spec: { seed: options.seed, products: options.products, orders: options.orders },
    dbName,
    dataDir: path.join(DATA_DIR, 'db'),
    log,
  });
  const servers = new Map<ServerId, ServerProcess>();
  try {
    const scenarios = selectScenarios(buildScenarios(await scenarioData(db, options)), options);
    const env: SharedServerEnv = {
      MONGODB_URI: db.uri,
      MONGODB_DB: dbName,
      JWT_SECRET,
      PUBLIC_BASE_URL,
    };
    if (options.profile) {
      await runProfile(options, scenarios[0] as Scenario, env, db);
      return;
    }

    const needed = SERVER_IDS.filter((id) => scenarios.some((scenario) => scenario.requests[id]));
    for (const [id, server] of await startServers(needed, env)) servers.set(id, server);

    const checks = new Map<string, ScenarioCheck[]>();
    for (const scenario of scenarios) {
      const result = await checkScenario(scenario, servers);
      checks.set(scenario.id, result);
      for (const check of result) {
        if (!check.ok || /DIFFER/.test(check.note))
          log(`check ${scenario.id} / ${check.server}: ${check.note}`);
        if (!check.ok) delete scenario.requests[check.server];
      }
    }

    const idle = await measureIdle(servers, db, options.smoke ? 1 : 3);
    const runs: RunMeasurement[] = [];
    const warmed = new Set<string>();
    const totalRuns = options.rounds * scenarios.reduce((sum, s) => sum + Object.keys(s.requests).length, 0);
    let done = 0;
    for (let round = 1; round <= options.rounds; round++) {
      for (const [index, scenario] of scenarios.entries()) {
        const ids = Object.keys(scenario.requests) as ServerId[];
        // Rotate the order every round and scenario, so no server is always first or last.
        const shift = (round - 1 + index) % ids.length;
        for (const id of [...ids.slice(shift), ...ids.slice(0, shift)]) {
          const server = servers.get(id) as ServerProcess;
          const request = scenario.requests[id] as RequestSpec;
          const key = `${scenario.id}/${id}`;
          if (!warmed.has(key) && options.warmup > 0)
            await drive(server.origin, request, options.warmup, options.connections);
          warmed.add(key);
          const run = await measure(server, db, scenario, request, round, options);
          runs.push(run);
          done++;
          log(
            `[${done}/${totalRuns}] round ${round} ${scenario.id} ${id}: ${run.rps.toFixed(0)} req/s, ` +
              `${run.cpuMsPerRequest.toFixed(3)} CPU ms/req, p50 ${run.p50Ms} ms`,
          );
        }
      }
    }

    const summaries = new Map<string, Summary[]>();
    const sections: string[] = [];
    for (const scenario of scenarios) {
      const ids = SERVER_IDS.filter((id) => scenario.requests[id]);
      const list = ids.map((id) =>
        summarise(
          id,
          runs.filter((run) => run.scenario === scenario.id && run.server === id),
        ),
      );
      summaries.set(scenario.id, list);
      sections.push(scenarioTable(scenario, list, checks.get(scenario.id) ?? []));
    }
    const targets = targetRows(scenarios, summaries);
    const finishedAt = new Date();
    const info = machine();
    const header = [
      `## Benchmark ${startedAt.toISOString()}`,
      '',
      `${options.products} products, ${options.orders} orders (seed ${options.seed}) on ` +
        `${DATABASE_LABELS[db.kind]}; ${options.rounds} round(s) × ` +
        `${options.duration} s per server per scenario, ${options.connections} connections, medians. ` +
        `${info.cpus} × ${info.cpuModel}, ${info.memoryGiB} GiB, Node ${info.node}.`,
      '',
    ].join('\n');
    console.log(
      `\n${header}\n${sections.join('\n\n')}\n\n### At rest (before the rounds)\n\n${idleTable(idle)}\n\n` +
        `### Targets (issue 6)\n\n${targetTable(targets)}\n`,
    );

    await mkdir(RESULTS_DIR, { recursive: true });
    const report = {
      version: 1,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      options,
      machine: {
        ...info,
        loadAverage: undefined,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: info.loadAverage,
      },
      database: DATABASE_LABELS[db.kind],
      seed: db.seed satisfies SeedReport,
      servers: Object.fromEntries(
        [...servers].map(([id, server]) => [id, { label: SERVER_LABELS[id], pid: server.pid }]),
      ),
      scenarios: scenarios.map((scenario) => ({
        id: scenario.id,
        title: scenario.title,
        api: scenario.api,
        requests: scenario.requests,
        checks: checks.get(scenario.id),
        medians: summaries.get(scenario.id),
      })),
      idle,
      targets,
      runs,
    };
    const file = path.join(RESULTS_DIR, `${timestamp(startedAt)}${options.smoke ? '-smoke' : ''}.json`);
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
    log(`results written to ${path.relative(process.cwd(), file)}`);
    log(`done in ${((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(0)} s`);
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await db.stop();
  }
}

await main();
