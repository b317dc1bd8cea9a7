import type { FieldErrors } from '../errors';
import { validationSummary } from '../errors';
import { jsonResponse, type Response } from '../http/fetch-api';

export const RETRY_AFTER_SECONDS = '5';

export const messageResponse = (status: number, message: string, headers: Record<string, string> = {}) =>
  jsonResponse(status, { message }, headers);

export function validationResponse(errors: FieldErrors): Response {
  return jsonResponse(422, { message: validationSummary(errors), errors });
}

/** The /api/v1 answer for an error code raised by the shared GraphQL data path. */
export function errorCodeResponse(
  code: unknown,
  message: string,
  errors: unknown,
  headers: Record<string, string> = {},
): Response {
  switch (code) {
    case 'RATE_LIMITED':
      // The cost budget: Laravel's throttle answer, as the request limit's 429.
      return messageResponse(429, 'Too Many Attempts.', headers);
    case 'UNAUTHENTICATED':
      return messageResponse(401, 'Unauthenticated.', { 'www-authenticate': 'Bearer' });
    case 'FORBIDDEN':
      return messageResponse(403, 'This action is unauthorized.');
    case 'NOT_FOUND':
      return messageResponse(404, message);
    case 'BAD_USER_INPUT':
      return validationResponse(errors as FieldErrors);
    case 'SERVICE_UNAVAILABLE':
      return messageResponse(503, 'Service Unavailable.', { 'retry-after': RETRY_AFTER_SECONDS });
    default:
      return messageResponse(500, 'Server Error.');
  }
}
