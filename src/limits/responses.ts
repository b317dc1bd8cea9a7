import { createGraphQLError } from 'graphql-yoga';
import type { Allowance } from './limiter';
import { jsonResponse, type Response } from '../http/fetch-api';

/**
 * The rate-limit headers of the IETF draft (draft-ietf-httpapi-ratelimit-headers-06/07): separate
 * `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) and `RateLimit-Policy`.
 */
export const RATE_LIMIT_HEADER_NAMES = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
] as const;

export function rateLimitHeaders(allowance: Allowance): Record<string, string> {
  const resetSeconds = String(Math.ceil(allowance.resetMs / 1000));
  return {
    'ratelimit-limit': String(allowance.limit),
    'ratelimit-remaining': String(allowance.remaining),
    'ratelimit-reset': resetSeconds,
    'ratelimit-policy': `${allowance.limit};w=60`,
    ...(allowance.allowed ? {} : { 'retry-after': resetSeconds }),
  };
}

/** The headers of an allowed request, set on its response (no record of them built on the way). */
export function setRateLimitHeaders(headers: Headers, allowance: Allowance): void {
  headers.set('ratelimit-limit', String(allowance.limit));
  headers.set('ratelimit-remaining', String(allowance.remaining));
  headers.set('ratelimit-reset', String(Math.ceil(allowance.resetMs / 1000)));
  headers.set('ratelimit-policy', `${allowance.limit};w=60`);
}

/** As Laravel's throttle middleware sends its 429 (no charset parameter). */
const JSON_TYPE = 'application/json';

/** A refused request, in the shape of the API it was sent to. */
export function tooManyRequests(api: 'rest' | 'graphql', allowance: Allowance): Response {
  const body =
    api === 'rest'
      ? // Laravel's throttle middleware, byte for byte.
        { message: 'Too Many Attempts.' }
      : { errors: [{ message: 'Too Many Requests.', extensions: { code: 'RATE_LIMITED' } }] };
  return jsonResponse(429, body, { 'content-type': JSON_TYPE, ...rateLimitHeaders(allowance) });
}

/** The shared store is down and the limits fail closed (RATE_LIMIT_FAIL_OPEN=false). */
export function limiterUnavailable(api: 'rest' | 'graphql'): Response {
  const body =
    api === 'rest'
      ? { message: 'Service Unavailable.' }
      : { errors: [{ message: 'Service Unavailable.', extensions: { code: 'SERVICE_UNAVAILABLE' } }] };
  return jsonResponse(503, body, { 'content-type': JSON_TYPE, 'retry-after': '5' });
}

/** An operation over the client's cost budget: a GraphQL error Yoga answers with 429 and the headers. */
export function costBudgetExceeded(allowance: Allowance) {
  return createGraphQLError('Too Many Requests: the query cost budget of this minute is spent.', {
    extensions: {
      code: 'RATE_LIMITED',
      http: { status: 429, headers: rateLimitHeaders(allowance) },
    },
  });
}
