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
