import { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';

/**
 * Expected failures. Their `extensions.code` is the shared language of GraphQL errors and REST
 * statuses (the REST mapping: src/rest/responses.ts).
 */

/** Field-level validation messages, keyed by the field's REST name (Laravel style). */
export type FieldErrors = Record<string, string[]>;

export function unauthenticated() {
  return createGraphQLError('Unauthenticated.', { extensions: { code: 'UNAUTHENTICATED' } });
}

export function forbidden() {
  return createGraphQLError('This action is unauthorized.', { extensions: { code: 'FORBIDDEN' } });
}

export function orderNotFound() {
  return createGraphQLError('Order not found.', { extensions: { code: 'NOT_FOUND' } });
}

/** Over HTTP, Yoga answers it 503 with Retry-After, like /api/v1 (`http` is never serialised). */
export function serviceUnavailable() {
  return createGraphQLError('Service Unavailable.', {
    extensions: { code: 'SERVICE_UNAVAILABLE', http: { status: 503, headers: { 'retry-after': '5' } } },
  });
}

/** Laravel's summary: the first message, plus "(and N more error(s))". */
export function validationSummary(errors: FieldErrors): string {
  const messages = Object.values(errors).flat();
  const [first = 'The given data was invalid.'] = messages;
  const more = messages.length - 1;
  return more > 0 ? `${first} (and ${more} more error${more === 1 ? '' : 's'})` : first;
}

export function badUserInput(errors: FieldErrors) {
  return createGraphQLError(validationSummary(errors), {
    extensions: { code: 'BAD_USER_INPUT', errors },
  });
}

/** A live subscription refused at its start: the client's or this instance's bound is reached. */
export function tooManySubscriptions(message: string) {
  return createGraphQLError(message, { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } });
}

/** A live subscription's last event when its reader fell too far behind to be kept. */
export function subscriberTooSlow(maxLagMs: number) {
  return createGraphQLError(
    `Changed orders waited more than ${maxLagMs} ms for this subscription to read them: it ended; subscribe again.`,
    { extensions: { code: 'SUBSCRIBER_TOO_SLOW' } },
  );
}

/** A live subscription's last event at its maximum lifetime: subscribe again after `retryAfter`. */
export function streamLifetimeReached(retryAfterSeconds: number) {
  return createGraphQLError(
    `This subscription reached its maximum lifetime: subscribe again in ${retryAfterSeconds} s.`,
    { extensions: { code: 'STREAM_LIFETIME_REACHED', retryAfter: retryAfterSeconds } },
  );
}

/** A live subscription's last event when its token expires. */
export function tokenExpired() {
  return createGraphQLError('The token has expired: subscribe again with a fresh one.', {
    extensions: { code: 'UNAUTHENTICATED' },
  });
}

/** A live subscription's last event when this instance shuts down: subscribe again (to another one). */
export function shuttingDown(retryAfterSeconds: number) {
  return createGraphQLError(`The server is shutting down: subscribe again in ${retryAfterSeconds} s.`, {
    extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: retryAfterSeconds },
  });
}

/**
 * Our expected errors always carry `extensions.code`. An execution error without one (graphql-jit
 * raises "Cannot return null for non-nullable field …" as a bare GraphQLError, where graphql-js
 * wraps a plain Error) is unexpected, so it is given an original error and masked like any other.
 */
export function asUnexpected(error: unknown): unknown {
  if (!(error instanceof GraphQLError) || error.originalError || error.extensions?.code || !error.path)
    return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    path: error.path,
    originalError: new Error(error.message),
  });
}
