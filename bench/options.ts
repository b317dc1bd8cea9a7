import { parseArgs } from 'node:util';
import type { FeedMode } from './ours-feed';
import { SERVER_IDS, type ServerId } from './servers';

/** The command line of `npm run bench`: its help text and the validated options. */

export const USAGE = `Usage: npm run bench -- [options]

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
  --servers a,b       Only these servers: ${SERVER_IDS.join(', ')} (all but lever-proto, yoga-jit and ours-before by default;
                      ours-before is ours from the checkout BENCH_BEFORE_DIR names)
  --smoke             Tiny data set, 1 s runs, 1 round, 5 scenarios covering every server: checks
                      the harness in well under a minute
  --feed log|poll     How ours follows the database: log (default on the embedded engine, as
                      production: CHANGE_FEED_POSTGRES_URL) or poll (MONGODB_URI only)
  --profile ID        Profile one scenario with node --cpu-prof instead of benchmarking, then print
                      the top functions by self time (server: --profile-server, default ours)
  --profile-server S  The server to profile (default ours)
  -h, --help          This help

Data lives in bench/.data (git-ignored) and is reused while seed and sizes match. The database's
own CPU is reported apart ("DB CPU ms/req"); each server's cost is its CPU milliseconds per
request, which a slow database does not hide (docs/benchmarks.md).`;

/** Every server and both APIs, in under a minute on two busy cores. */
const SMOKE_SCENARIOS = ['rest-products-p1', 'rest-search', 'rest-order', 'gql-product-page', 'gql-order'];

export interface Options {
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
  feed: FeedMode;
}

export class UsageError extends Error {}

function feedMode(raw: string | undefined): FeedMode {
  if (raw === undefined || raw === 'log' || raw === 'poll') return raw ?? 'log';
  throw new UsageError(`--feed must be log or poll, got "${raw}"`);
}

export function numberOption(
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

export function serverList(raw: string | undefined, name: string): ServerId[] | null {
  if (raw === undefined) return null;
  const ids = raw.split(',').map((id) => id.trim());
  const unknown = ids.filter((id) => !(SERVER_IDS as readonly string[]).includes(id));
  if (unknown.length > 0) throw new UsageError(`--${name}: unknown server ${unknown.join(', ')}`);
  return ids as ServerId[];
}

export function parseOptions(argv: string[]): Options | 'help' {
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
        feed: { type: 'string' },
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
    // The lever prototype runs only when named: it is a measurement of work not built, not a peer.
    servers:
      serverList(v.servers, 'servers') ??
      SERVER_IDS.filter((id) => id !== 'lever-proto' && id !== 'yoga-jit' && id !== 'ours-before'),
    smoke,
    profile: v.profile ?? null,
    profileServer: serverList(v['profile-server'], 'profile-server')?.[0] ?? 'ours',
    feed: feedMode(v.feed),
  };
}
