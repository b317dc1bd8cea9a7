import type { Plugin } from 'graphql-yoga';
import { jsonResponse, type Response } from './fetch-api';
import { useRouter, type Edge } from './router';

export interface HealthOptions {
  /** Resolves when the database answers; rejects otherwise. */
  pingDatabase: () => Promise<void>;
  /** How long /readyz waits for the database. Default 1000 ms. */
  readinessTimeoutMs?: number;
  /** True while shutting down: /readyz answers 503 so the load balancer stops sending. Default: never. */
  isDraining?: () => boolean;
  /**
   * Resolves true when the shared store (Redis), when there is one, answers a PING within its
   * command timeout: an open connection to a stopped Redis is not "ok". Reported as `redis: "ok" |
   * "degraded"`; it decides readiness only when `sharedStoreRequired`.
   */
  pingSharedStore?: () => Promise<boolean>;
  /** True when requests are refused without the store (rate limits failing closed): then 503. */
  sharedStoreRequired?: boolean;
}

const json = (status: number, body: unknown) => jsonResponse(status, body, { 'cache-control': 'no-store' });

/**
 * /healthz: the process is up (nothing else). /readyz: not shutting down and the database answers
 * a ping quickly; 503 otherwise. The shared store's state is reported beside, and required only
 * where the APIs would refuse every request without it.
 */
export function healthEdge({
  pingDatabase,
  readinessTimeoutMs = 1_000,
  isDraining = () => false,
  pingSharedStore,
  sharedStoreRequired = false,
}: HealthOptions): Edge {
  return {
    routes: { paths: { '/healthz': () => json(200, { status: 'ok' }), '/readyz': answerReadiness } },
  };

  async function answerReadiness(): Promise<Response> {
    const shuttingDown = () => json(503, { status: 'unavailable', reason: 'shutting down' });
    if (isDraining()) return shuttingDown();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('database ping timed out')), readinessTimeoutMs);
    });
    const storeAnswers = pingSharedStore?.().catch(() => false);
    try {
      await Promise.race([pingDatabase(), timeout]);
    } catch {
      return json(503, { status: 'unavailable', reason: 'database' });
    } finally {
      clearTimeout(timer);
    }
    const store = storeAnswers === undefined ? {} : { redis: (await storeAnswers) ? 'ok' : 'degraded' };
    // A drain that began during the pings wins: the balancer must not read "ready" after SIGTERM.
    if (isDraining()) return shuttingDown();
    if (store.redis === 'degraded' && sharedStoreRequired) {
      return json(503, { status: 'unavailable', reason: 'redis', ...store });
    }
    return json(200, { status: 'ready', ...store });
  }
}

/** The same, as a plugin of its own. */
export function useHealth(options: HealthOptions): Plugin {
  return useRouter([healthEdge(options)]);
}
