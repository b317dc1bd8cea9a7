import type { Plugin } from 'graphql-yoga';
import { jsonResponse, type Response } from './fetch-api';

export interface HealthOptions {
  /** Resolves when the database answers; rejects otherwise. */
  pingDatabase: () => Promise<void>;
  /** How long /readyz waits for the database. Default 1000 ms. */
  readinessTimeoutMs?: number;
  /** True while shutting down: /readyz answers 503 so the load balancer stops sending. Default: never. */
  isDraining?: () => boolean;
  /**
   * Whether the shared store (Redis) is connected, when there is one. Reported as `redis: "ok" |
   * "degraded"` but never decides readiness: without it the caches and limits go per process.
   */
  sharedStoreReady?: () => boolean;
}

const json = (status: number, body: unknown) => jsonResponse(status, body, { 'cache-control': 'no-store' });

/**
 * /healthz: the process is up (nothing else). /readyz: not shutting down and the database answers
 * a ping quickly; 503 otherwise. The shared store's state is reported beside, not required.
 */
export function useHealth({
  pingDatabase,
  readinessTimeoutMs = 1_000,
  isDraining = () => false,
  sharedStoreReady,
}: HealthOptions): Plugin {
  return {
    onRequest({ url, endResponse }) {
      if (url.pathname === '/healthz') return endResponse(json(200, { status: 'ok' }));
      // Synchronous for every other path: an async hook makes each request wait a microtask turn.
      if (url.pathname === '/readyz') return answerReadiness(endResponse);
    },
  };

  async function answerReadiness(endResponse: (response: Response) => void): Promise<void> {
    const shuttingDown = () => json(503, { status: 'unavailable', reason: 'shutting down' });
    if (isDraining()) return endResponse(shuttingDown());
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('database ping timed out')), readinessTimeoutMs);
    });
    try {
      await Promise.race([pingDatabase(), timeout]);
      // A drain that began during the ping wins: the balancer must not read "ready" after SIGTERM.
      if (isDraining()) return endResponse(shuttingDown());
      const store = sharedStoreReady ? { redis: sharedStoreReady() ? 'ok' : 'degraded' } : {};
      endResponse(json(200, { status: 'ready', ...store }));
    } catch {
      endResponse(json(503, { status: 'unavailable', reason: 'database' }));
    } finally {
      clearTimeout(timer);
    }
  }
}
