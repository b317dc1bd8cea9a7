import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger';
import type { Metrics } from '../observability/metrics';
import type { Edge } from './router';
import type { RouteLabel } from './routes';

export interface RequestLogOptions {
  /** Absent: no log line (REQUEST_LOG=off). */
  logger?: Logger;
  /** Absent: no latency observation (METRICS=off). */
  metrics?: Metrics;
  /** Names the request's route in its log line and latency metric. */
  routeLabel: RouteLabel;
  /** The request's trace id when tracing is on; logged as `traceId`. */
  traceId?: () => string | undefined;
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

interface RequestTiming {
  id: string;
  pathname: string;
  startedAt: bigint;
  traceId?: string;
}

/**
 * One log line and one latency observation per request, with a request id taken from
 * X-Request-Id (when sane) or generated, and echoed in the response. Headers are never logged.
 */
export function requestLogEdge({ logger, metrics, routeLabel, traceId }: RequestLogOptions): Edge {
  const timings = new WeakMap<Request, RequestTiming>();
  // Level checked once per request: below info the line would be built only to be dropped.
  const logs = () => logger !== undefined && logger.isLevelEnabled('info');
  return {
    routes: {
      other(request, url) {
        const given = request.headers.get('x-request-id');
        timings.set(request, {
          // randomUUID draws from a cached entropy pool; a ULID per request cost a syscall each.
          id: given && CLIENT_REQUEST_ID.test(given) ? given : randomUUID(),
          pathname: url.pathname,
          startedAt: process.hrtime.bigint(),
          traceId: traceId?.(),
        });
      },
    },
    onResponse(request, response) {
      const timing = timings.get(request);
      if (!timing) return;
      response.headers.set('x-request-id', timing.id);
      const writesLog = logs();
      if (!writesLog && !metrics) return;
      const seconds = Number(process.hrtime.bigint() - timing.startedAt) / 1e9;
      const route = routeLabel(timing.pathname);
      metrics?.observeRequest(request.method, route, response.status, seconds);
      if (!writesLog) return;
      logger!.info(
        {
          requestId: timing.id,
          ...(timing.traceId ? { traceId: timing.traceId } : {}),
          method: request.method,
          route,
          path: timing.pathname,
          status: response.status,
          durationMs: Math.round(seconds * 1e6) / 1e3,
        },
        'request',
      );
    },
  };
}
