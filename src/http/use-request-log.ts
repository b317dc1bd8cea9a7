import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../logger';
import type { Metrics } from '../observability/metrics';
import { routeLabel } from './routes';

export interface RequestLogOptions {
  logger: Logger;
  metrics: Metrics;
  /** The request's trace id when tracing is on; logged as `traceId`. */
  traceId?: () => string | undefined;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

interface RequestTiming {
  id: string;
  startedAt: bigint;
  traceId?: string;
}

/**
 * One log line and one latency observation per request, with a request id taken from
 * X-Request-Id (when sane) or generated, and echoed in the response. Headers are never logged.
 */
export function useRequestLog({ logger, metrics, traceId }: RequestLogOptions): Plugin {
  const timings = new WeakMap<Request, RequestTiming>();
  return {
    onRequest({ request }) {
      const given = request.headers.get('x-request-id');
      timings.set(request, {
        // randomUUID draws from a cached entropy pool; a ULID per request cost a syscall each.
        id: given && CLIENT_REQUEST_ID.test(given) ? given : randomUUID(),
        startedAt: process.hrtime.bigint(),
        traceId: traceId?.(),
      });
    },
    onResponse({ request, response }) {
      const timing = timings.get(request);
      if (!timing) return;
      const seconds = Number(process.hrtime.bigint() - timing.startedAt) / 1e9;
      const url = new URL(request.url);
      const route = routeLabel(url.pathname);
      response.headers.set('x-request-id', timing.id);
      metrics.httpDuration.observe(
        { method: request.method, route, status: String(response.status) },
        seconds,
      );
      logger.info(
        {
          requestId: timing.id,
          ...(timing.traceId ? { traceId: timing.traceId } : {}),
          method: request.method,
          route,
          path: url.pathname,
          status: response.status,
          durationMs: Math.round(seconds * 1e6) / 1e3,
        },
        'request',
      );
    },
  };
}
