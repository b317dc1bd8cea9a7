import type { Plugin } from 'graphql-yoga';

export interface HealthOptions {
  /** Resolves when the database answers; rejects otherwise. */
  pingDatabase: () => Promise<void>;
  /** How long /readyz waits for the database. Default 1000 ms. */
  readinessTimeoutMs?: number;
  /** True while shutting down: /readyz answers 503 so the load balancer stops sending. Default: never. */
  isDraining?: () => boolean;
  /** The shared store's state, when there is one: reported, but readiness follows the database. */
  sharedStore?: () => 'ok' | 'degraded';
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });

/**
 * /healthz: the process is up (nothing else). /readyz: not shutting down and the database answers
 * a ping quickly; 503 otherwise. A shared store that is down is reported (`"redis": "degraded"`)
 * but keeps the instance ready: every use of it falls back to per-process behaviour.
 */
export function useHealth({
  pingDatabase,
  readinessTimeoutMs = 1_000,
  isDraining = () => false,
  sharedStore,
}: HealthOptions): Plugin {
  return {
    async onRequest({ url, endResponse }) {
      if (url.pathname === '/healthz') return endResponse(json(200, { status: 'ok' }));
      if (url.pathname !== '/readyz') return;
      if (isDraining()) return endResponse(json(503, { status: 'unavailable', reason: 'shutting down' }));
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('database ping timed out')), readinessTimeoutMs);
      });
      try {
        await Promise.race([pingDatabase(), timeout]);
        endResponse(json(200, { status: 'ready', ...(sharedStore ? { redis: sharedStore() } : {}) }));
      } catch {
        endResponse(json(503, { status: 'unavailable', reason: 'database' }));
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
