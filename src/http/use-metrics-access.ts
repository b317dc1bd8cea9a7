import { createHash, timingSafeEqual } from 'node:crypto';
import { jsonResponse } from './fetch-api';
import type { Edge } from './router';

export interface MetricsAccessOptions {
  /** Bearer token /metrics requires; unset: see `openWithoutToken`. */
  token?: string;
  /** Whether /metrics is served without a token when none is configured (not in production). */
  openWithoutToken: boolean;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

const answer = (status: number, message: string, headers: Record<string, string> = {}) =>
  jsonResponse(status, { message }, headers);

/**
 * Guards /metrics (route names, latencies, process figures): with a token, only a matching
 * `Authorization: Bearer` gets in (compared in constant time); without one it is open outside
 * production and absent (404) in production. Must run before the Prometheus plugin.
 */
export function metricsAccessEdge({ token, openWithoutToken }: MetricsAccessOptions): Edge {
  const expected = token === undefined ? undefined : digest(token);
  const guard = (request: Request) => {
    if (!expected) return openWithoutToken ? undefined : answer(404, 'Not Found.');
    const given = /^Bearer (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      return answer(401, 'Unauthenticated.', { 'www-authenticate': 'Bearer' });
    }
  };
  return { routes: { paths: { [METRICS_PATH]: guard } } };
}

/** Where the metrics are served (src/observability/metrics.ts serves them there). */
export const METRICS_PATH = '/metrics';

/** How /metrics is served with these options, as the start page tells it. */
export function metricsServed({ token, openWithoutToken }: MetricsAccessOptions): 'open' | 'token' | 'off' {
  if (token) return 'token';
  return openWithoutToken ? 'open' : 'off';
}
