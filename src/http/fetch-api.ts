import { Headers, Response } from '@whatwg-node/fetch';

/**
 * The Response class Yoga itself builds answers with (whatwg-node's Node.js ponyfill). Its server
 * adapter writes such a response's string body to the socket in one call; a global (undici)
 * Response it can only read back through a web stream, which cost ~0.1 ms per request.
 */
export { Headers, Response };

/** Our JSON answers (both APIs, health, limits), errors included, are UTF-8. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A JSON answer; `headers` may override the content type. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': JSON_CONTENT_TYPE, ...headers },
  });
}
