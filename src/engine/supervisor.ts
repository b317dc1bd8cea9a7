import { setTimeout as sleep } from 'node:timers/promises';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './launch';

export interface SupervisorOptions {
  log: (message: string, details?: Record<string, unknown>) => void;
  /** Waits before each restart attempt, the last one repeated. Default 200 ms doubling to 5 s. */
  backoffMs?: number[];
}

const DEFAULT_BACKOFF_MS = [200, 400, 800, 1_600, 3_200, 5_000];

/**
 * Keeps the embedded database running: when PostgreSQL or FerretDB dies (the launcher then stops
 * the other), both are started again, with backoff, on the same port and data folder, so the
 * driver (which reconnects by itself) finds the database where it was. Before this, a killed
 * database meant a 503 on every request until someone restarted the server.
 */
export function superviseEmbeddedDatabase(
  initial: EmbeddedDatabase,
  { log, backoffMs = DEFAULT_BACKOFF_MS }: SupervisorOptions,
): EmbeddedDatabase {
  let current = initial;
  let stopping = false;
  const stopped = new AbortController();

  const restartUntilUp = async () => {
    for (let attempt = 0; !stopping; attempt++) {
      const waitMs = backoffMs[Math.min(attempt, backoffMs.length - 1)] ?? 1_000;
      log('embedded database exited; restarting it', { port: initial.port, attempt: attempt + 1, waitMs });
      await sleep(waitMs, undefined, { signal: stopped.signal }).catch(() => undefined);
      if (stopping) return;
      try {
        const restarted = await startEmbeddedDatabase({
          dataDir: initial.dataDir,
          port: initial.port,
          throwaway: initial.throwaway,
          log: (line) => log(line),
        });
        if (stopping) {
          await restarted.stop();
          return;
        }
        current = restarted;
        log('embedded database restarted', { port: initial.port, pid: restarted.pid });
        return;
      } catch (error) {
        log('embedded database restart failed', { error: (error as Error).message.split('\n')[0] });
      }
    }
  };

  const watched = (async () => {
    while (!stopping) {
      await current.exited;
      if (stopping) return;
      await restartUntilUp();
    }
  })();

  return {
    uri: initial.uri,
    postgresUrl: initial.postgresUrl,
    port: initial.port,
    dataDir: initial.dataDir,
    throwaway: initial.throwaway,
    get pid() {
      return current.pid;
    },
    get pids() {
      return current.pids;
    },
    get exited() {
      return watched;
    },
    async stop() {
      stopping = true;
      stopped.abort();
      await current.stop();
      await watched;
    },
  };
}
