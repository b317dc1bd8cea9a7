import { maskError, type YogaServerOptions } from 'graphql-yoga';
import type { Config } from './config';
import { isAdmissionOutcome } from './db/guards/deadline';
import { isDatabaseUnavailable } from './db/mongo';
import { asUnexpected, serviceUnavailable } from './errors';
import { RATE_LIMIT_HEADER_NAMES } from './limits/responses';
import type { Logger } from './logger';
import type { ErrorLog } from './observability/error-log';

type Options = YogaServerOptions<Record<string, unknown>, Record<string, unknown>>;

/**
 * The headers that mark a GraphQL request as not "simple" (a browser preflights it under CORS).
 * Yoga's own, and Apollo Client's two, so its users need no change.
 */
export const CSRF_HEADERS = ['x-graphql-yoga-csrf', 'apollo-require-preflight', 'x-apollo-operation-name'];

/** CORS for the origins CORS_ORIGINS names; none: no CORS headers at all. */
export function corsOf(config: Config): Options['cors'] {
  if (config.corsOrigins.length === 0) return false;
  return {
    origin: config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['authorization', 'content-type', 'x-request-id', ...CSRF_HEADERS],
    exposedHeaders: ['x-request-id', 'retry-after', 'etag', 'x-cache', ...RATE_LIMIT_HEADER_NAMES],
    maxAge: 600,
  };
}

/** Yoga's log lines into the server's log. */
export function yogaLogging(logger: Logger, errorLog: ErrorLog): Options['logging'] {
  return {
    debug: (...args) => logger.debug(args.map(String).join(' ')),
    info: (...args) => logger.info(args.map(String).join(' ')),
    warn: (...args) => logger.warn(args.map(String).join(' ')),
    // A refused or abandoned database call is the admission control working, not a failure:
    // one line each would let an overload write the log as fast as it is refused.
    error: (...args) =>
      isAdmissionOutcome(args[0]) ? undefined : errorLog.error(args[0], 'graphql server error'),
  };
}

export const MASKED_ERRORS: Options['maskedErrors'] = {
  // Never expose internals, not even in development; a lost database is a retryable 503.
  maskError(error, message) {
    const original = (error as { originalError?: unknown }).originalError ?? error;
    if (isDatabaseUnavailable(original)) return serviceUnavailable();
    // Yoga logs what this masks (yogaLogging's error): once, with the original error.
    return maskError(asUnexpected(error), message, false);
  },
};
