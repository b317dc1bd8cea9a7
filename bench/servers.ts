import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVER_NODE_FLAGS } from '../scripts/node-flags';
import { freeLoopbackPort, waitForExit } from '../src/engine/guarded-child';

/** The servers under test, each started as its own child process on its own loopback port. */

export const SERVER_IDS = [
  'baseline',
  'ours',
  'ours-bare',
  'ours-cached',
  'apollo',
  'mercurius',
  'mercurius-jit',
  'sofa',
  'lever-proto',
  'yoga-jit',
  'ours-before',
] as const;
export type ServerId = (typeof SERVER_IDS)[number];

export const SERVER_LABELS: Record<ServerId, string> = {
  baseline: 'baseline (node:http + driver)',
  ours: 'ours (Yoga + REST adapter)',
  'ours-bare': 'ours, bare (no metrics, request log, limits, cache)',
  'ours-cached': 'ours, response cache on',
  apollo: 'Apollo Server 5',
  mercurius: 'Mercurius (Fastify)',
  'mercurius-jit': 'Mercurius + graphql-jit',
  sofa: 'SOFA (sofa-api)',
  'lever-proto': 'lever prototype (our plugins on envelop + node:http)',
  'yoga-jit': 'createYoga + graphql-jit (no guards)',
  'ours-before': 'ours as BENCH_BEFORE_DIR has it (the same settings)',
};

/**
 * `ours` runs with the response cache off, so every request does the work the others do; the
 * cache's gain is measured separately by `ours-cached` (a TTL longer than the whole run). Its
 * rate limits are on, as in production, at a ceiling the one load generator never reaches
 * (issue 29: every production plugin is in the measured cost).
 * `ours-bare` also turns metrics and the request log off and keeps the limits off (as for every
 * other server, see below): the difference to `ours` is what those features cost, the rest is
 * Yoga's and ours.
 */
const UNREACHED_LIMITS = {
  RATE_LIMIT_REQUESTS_PER_MINUTE: '100000000',
  RATE_LIMIT_COST_PER_MINUTE: '1000000000000',
};
const EXTRA_ENV: Partial<Record<ServerId, Record<string, string>>> = {
  ours: { RESPONSE_CACHE_TTL_MS: '0', ...UNREACHED_LIMITS },
  'ours-before': { RESPONSE_CACHE_TTL_MS: '0', ...UNREACHED_LIMITS },
  'ours-bare': { RESPONSE_CACHE_TTL_MS: '0', METRICS: 'off', REQUEST_LOG: 'off' },
  'ours-cached': { RESPONSE_CACHE_TTL_MS: '3600000', ...UNREACHED_LIMITS },
};

/** Each server's source entry (and arguments): what other benches run under tsx, and what buildBundles bundles. */
const ENTRY: Record<ServerId, string[]> = {
  baseline: ['bench/baseline.ts'],
  ours: ['bench/ours.ts'],
  'ours-bare': ['bench/ours.ts'],
  'ours-cached': ['bench/ours.ts'],
  apollo: ['bench/peers/apollo.ts'],
  mercurius: ['bench/peers/mercurius.ts'],
  'mercurius-jit': ['bench/peers/mercurius.ts', '--jit'],
  sofa: ['bench/peers/sofa.ts'],
  'lever-proto': ['bench/peers/lever-proto.ts'],
  'yoga-jit': ['bench/peers/yoga.ts'],
  'ours-before': ['bench/ours.ts'],
};

/**
 * What `npm run bench` runs: every server from an esbuild bundle made with the production build's
 * own settings (package.json `scripts.build`), not module by module under tsx, whose `keepNames`
 * sets a name on every named closure made at run time (`__name`, a `defineProperty`: ~12 µs a
 * request in ours, ~3 in yoga-jit, which runs our context and resolvers).
 * - `ours` and its variants: the production bundle itself, `dist/start.js` of their checkout
 *   (`npm run build`, what `npm run start:production` runs), built now in that checkout.
 * - the peers and the baseline: their entry bundled with the same flags into `dist/bench/`.
 * Both builds add `--sourcemap` (a `.map` beside each file and one comment line, nothing that
 * runs) so that `--profile` can name the source files of the bundle's functions.
 * Returns each server's entry (what node runs, relative to its checkout).
 */
export function buildBundles(ids: readonly ServerId[], log: (line: string) => void): Map<ServerId, string[]> {
  const entries = new Map<ServerId, string[]>();
  const built = new Set<string>();
  const peers = ids.filter((id) => !id.startsWith('ours'));
  for (const id of ids) {
    if (!id.startsWith('ours')) continue;
    const checkout = checkoutOf(id);
    if (!built.has(checkout)) {
      execFileSync('npm', ['run', '-s', 'build', '--', '--sourcemap'], { cwd: checkout, stdio: 'inherit' });
      built.add(checkout);
      log(`production bundle built in ${path.relative(process.cwd(), checkout) || '.'}/dist`);
    }
    entries.set(id, [PRODUCTION_BUNDLE]);
  }
  if (peers.length > 0) {
    const scripts = [...new Set(peers.map((id) => ENTRY[id][0] as string))];
    const [esbuild, , ...flags] = buildScript().split(' ');
    const settings = flags.map((flag) => (flag.startsWith('--outdir=') ? `--outdir=${PEER_BUNDLES}` : flag));
    const bin = path.join('node_modules', '.bin', esbuild as string);
    execFileSync(bin, [...scripts, ...settings, '--outbase=bench', '--sourcemap'], { stdio: 'inherit' });
    for (const id of peers) {
      const [script, ...args] = ENTRY[id];
      const bundled = path.join(
        PEER_BUNDLES,
        path.relative('bench', script as string).replace(/\.ts$/, '.js'),
      );
      entries.set(id, [bundled, ...args]);
    }
    log(`peers bundled with the production build's settings into ${PEER_BUNDLES}/`);
  }
  return entries;
}

/** `npm run build`'s output: what `npm run start:production` runs. */
export const PRODUCTION_BUNDLE = path.join('dist', 'start.js');
const PEER_BUNDLES = path.join('dist', 'bench');

/** package.json's build command: `esbuild <entry> <flags…>`, the one declaration of the settings. */
function buildScript(): string {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { build: string } };
  if (!pkg.scripts.build.startsWith('esbuild '))
    throw new Error('package.json build is not an esbuild command');
  return pkg.scripts.build;
}

/**
 * `ours-before` is `ours` from another checkout (BENCH_BEFORE_DIR, with its own node_modules),
 * so a change and its base are measured interleaved in one run, on the same load.
 */
function checkoutOf(id: ServerId): string {
  if (id !== 'ours-before') return process.cwd();
  const dir = process.env.BENCH_BEFORE_DIR;
  if (!dir) throw new Error('ours-before needs BENCH_BEFORE_DIR: the checkout to run ours from');
  return path.resolve(dir);
}

/** The HS256 secret every benchmark server and its tokens share. */
export const BENCH_JWT_SECRET = 'bench-secret-of-at-least-32-characters-000';

export interface SharedServerEnv {
  MONGODB_URI: string;
  MONGODB_DB: string;
  JWT_SECRET: string;
  PUBLIC_BASE_URL: string;
  /** bench:scale measures slow requests instead of answering 503 at the default 3 s. */
  MONGODB_TIMEOUT_MS?: string;
  /** bench:scale and the bench read /metrics (to see when the server follows the log). */
  METRICS_TOKEN?: string;
  /** ours follows the embedded engine's log, as in production (bench/ours-feed.ts). */
  CHANGE_FEED_POSTGRES_URL?: string;
}

export interface ServerProcess {
  id: ServerId;
  pid: number;
  port: number;
  origin: string;
  logFile: string;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function waitUntilListening(child: ChildProcess, origin: string, logFile: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited(child)) {
      const log = await readFile(logFile, 'utf8').catch(() => '');
      throw new Error(`exited during start-up:\n${log.split('\n').slice(-15).join('\n')}`);
    }
    try {
      await fetch(`${origin}/`, { signal: AbortSignal.timeout(1_000) }).then((response) =>
        response.body?.cancel(),
      );
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`did not listen on ${origin} within ${timeoutMs} ms`);
      await sleep(100);
    }
  }
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts one server; `nodeFlags` go before the entry (e.g. --cpu-prof). */
export async function startServerProcess(
  id: ServerId,
  options: {
    env: SharedServerEnv;
    logDir: string;
    nodeFlags?: string[];
    startTimeoutMs?: number;
    /** Settings of this run only (bench/attacks.ts: a short cache TTL), applied last. */
    extraEnv?: Record<string, string>;
    /** What node runs instead of the server's entry under tsx (e.g. the production bundle). */
    entry?: string[];
  },
): Promise<ServerProcess> {
  const port = await freeLoopbackPort();
  const origin = `http://127.0.0.1:${port}`;
  await mkdir(options.logDir, { recursive: true });
  const logFile = path.join(options.logDir, `${id}.log`);
  const log = createWriteStream(logFile, { flags: 'w' });
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(MONGODB_|JWT_|PORT$|HOST$|PUBLIC_BASE_URL$|NODE_OPTIONS$)/.test(name),
    ),
  );
  const ownFlags = id.startsWith('ours') || id === 'lever-proto' ? SERVER_NODE_FLAGS : [];
  const child = spawn(
    process.execPath,
    [...ownFlags, ...(options.nodeFlags ?? []), ...(options.entry ?? ['--import', 'tsx', ...ENTRY[id]])],
    {
      cwd: checkoutOf(id),
      env: {
        ...inherited,
        ...options.env,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        SEED_FIXTURES: 'false',
        LOG_LEVEL: 'warn',
        // Production limits one client to 600 requests a minute: the load generator is one client
        // (`ours` keeps its limits on, at a ceiling: EXTRA_ENV).
        RATE_LIMIT_REQUESTS_PER_MINUTE: '0',
        RATE_LIMIT_COST_PER_MINUTE: '0',
        // And opens up to 400 connections from one address (bench/attacks.ts).
        MAX_CONNECTIONS_PER_ADDRESS: '0',
        DATA_DIR: path.join(options.logDir, '..', id === 'ours-before' ? 'ours-before-data' : 'ours-data'),
        ...EXTRA_ENV[id],
        ...options.extraEnv,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  running.add(child);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  child.once('exit', () => {
    running.delete(child);
    log.end();
  });
  const stop = async () => {
    if (exited(child)) return;
    child.stdin?.end();
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 10_000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 5_000);
    }
  };
  try {
    await waitUntilListening(child, origin, logFile, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await stop();
    throw new Error(`${SERVER_LABELS[id]}: ${(error as Error).message}`);
  }
  return { id, pid: child.pid ?? -1, port, origin, logFile, stop };
}

/**
 * Starts several servers at once, each from its bundle (buildBundles, built first); if one fails,
 * stops the others and throws its error.
 */
export async function startServers(
  ids: ServerId[],
  options: {
    env: SharedServerEnv;
    logDir: string;
    nodeFlags?: string[];
    log: (line: string) => void;
    /** Bundles built already (buildBundles); default: built now. */
    entries?: Map<ServerId, string[]>;
  },
): Promise<Map<ServerId, ServerProcess>> {
  const { env, logDir, nodeFlags = [], log } = options;
  const servers = new Map<ServerId, ServerProcess>();
  const entries = options.entries ?? buildBundles(ids, log);
  const started = performance.now();
  // In parallel: start-up is not measured, and one at a time takes half a minute on two cores.
  const results = await Promise.allSettled(
    ids.map((id) => startServerProcess(id, { env, logDir, nodeFlags, entry: entries.get(id) })),
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
