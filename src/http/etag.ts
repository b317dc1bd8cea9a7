import { createHash } from 'node:crypto';
import { JSON_CONTENT_TYPE, Response } from './fetch-api';
import { ifNoneMatchMatches } from './headers';

/** The strong validator of a finished body: REST pages and cached GraphQL results alike. */
export function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** A public 200 with a strong ETag; 304 without a body when the client already holds it. */
export function conditionalJsonResponse(
  { body, etag }: { body: string; etag: string },
  ifNoneMatch: string | null,
  headers: Record<string, string> = {},
): Response {
  if (ifNoneMatchMatches(ifNoneMatch, etag))
    return new Response(null, { status: 304, headers: { ...headers, etag } });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': JSON_CONTENT_TYPE, ...headers, etag },
  });
}
