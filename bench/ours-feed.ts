import type { BenchDatabase } from './database';
import type { ServerId, ServerProcess } from './servers';

/**
 * How `ours` follows the benchmark database. On the embedded engine, as production runs it
 * (README, CHANGE_FEED_POSTGRES_URL: "the embedded database's own"): from PostgreSQL's log. `poll`
 * gives it only MONGODB_URI, the fallback for a database with neither log nor change streams
 * (the bench's figures before 28 November 2026).
 */
export type FeedMode = 'log' | 'poll';

/** /metrics of ours, to see when a server holds the log's lasting slot. */
const METRICS_TOKEN = 'bench-metrics-token-of-at-least-32-chars-0';

export function feedEnv(db: BenchDatabase, mode: FeedMode): Record<string, string> {
  if (mode === 'poll' || !db.embedded) return {};
  return { CHANGE_FEED_POSTGRES_URL: db.embedded.postgresUrl, METRICS_TOKEN };
}

/** What the run's report says of it. */
export function feedLabel(db: BenchDatabase, mode: FeedMode): string {
  return Object.keys(feedEnv(db, mode)).length > 0
    ? "ours follows the engine's log (CHANGE_FEED_POSTGRES_URL)"
    : 'ours follows the database by polling (no CHANGE_FEED_POSTGRES_URL)';
}

/**
 * With the log, waits until one of ours holds the lasting slot: on the fresh benchmark database
 * that is after its first start's resync (every product's search row checked), which would
 * otherwise run inside the first measured round.
 */
export async function untilFollowing(
  servers: ReadonlyMap<ServerId, ServerProcess>,
  env: Record<string, string>,
  log: (line: string) => void,
): Promise<void> {
  if (!env.CHANGE_FEED_POSTGRES_URL) return;
  const ours = [...servers.values()].filter((server) => server.id.startsWith('ours'));
  if (ours.length === 0) return;
  const started = performance.now();
  const leads = async (server: ServerProcess) => {
    const response = await fetch(`${server.origin}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    }).catch(() => undefined);
    return /^change_feed_log_leading 1$/m.test((await response?.text()) ?? '');
  };
  while (!(await Promise.all(ours.map(leads))).some(Boolean)) {
    if (performance.now() - started > 120_000) throw new Error('no ours server took the log slot in 2 min');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`ours follows the log, ${((performance.now() - started) / 1000).toFixed(1)} s after listening`);
}
