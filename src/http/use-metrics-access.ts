import { createHash, timingSafeEqual } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { jsonResponse } from './fetch-api';

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
export function useMetricsAccess({ token, openWithoutToken }: MetricsAccessOptions): Plugin {
  const expected = token === undefined ? undefined : digest(token);
  return {
    onRequest({ url, request, endResponse }) {
      if (url.pathname !== '/metrics') return;
      if (!expected) {
        if (!openWithoutToken) endResponse(answer(404, 'Not Found.'));
        return;
      }
      const given = /^Bearer (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        endResponse(answer(401, 'Unauthenticated.', { 'www-authenticate': 'Bearer' }));
      }
    },
  };
}
