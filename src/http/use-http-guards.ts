import { SECURITY_HEADERS } from './headers';
import { jsonResponse, type Response } from './fetch-api';
import type { Edge } from './router';

/** GraphiQL's page starts the editor with inline scripts, and the editor sets inline styles. */
const HTML_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; style-src 'self' 'unsafe-inline'; " +
    "img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  ...SECURITY_HEADERS,
};

/** Both APIs' "who are you?" answer, each in its own shape. */
function unauthenticated(pathname: string): Response {
  const body = pathname.startsWith('/api/v1')
    ? { message: 'Unauthenticated.' }
    : { errors: [{ message: 'Unauthenticated.', extensions: { code: 'UNAUTHENTICATED' } }] };
  return jsonResponse(401, body, { 'www-authenticate': 'Bearer' });
}

/** node:http keeps the first of repeated Authorization headers; the raw headers still list them all. */
function authorizationCount(serverContext: unknown): number {
  const req = (serverContext as { req?: NodeRequestHeaders } | undefined)?.req;
  // Most requests carry none: their headers are not walked.
  if (!req || req.headers?.authorization === undefined) return 0;
  const raw = req.rawHeaders ?? [];
  let count = 0;
  for (let index = 0; index < raw.length; index += 2) {
    if (raw[index]?.length === 13 && raw[index]!.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

interface NodeRequestHeaders {
  headers?: Record<string, unknown>;
  rawHeaders?: string[];
}

/**
 * Refuses ambiguous credentials (two Authorization headers: which one would we check?) and
 * hardens every HTML page. Bodies are capped below, at the node:http layer (node-guards.ts).
 */
export function httpGuardsEdge(): Edge {
  return {
    routes: {
      other(_request, url, serverContext) {
        if (authorizationCount(serverContext) > 1) return unauthenticated(url.pathname);
      },
    },
    onResponse(_request, response) {
      if (!response.headers.get('content-type')?.startsWith('text/html')) return;
      for (const [name, value] of Object.entries(HTML_SECURITY_HEADERS)) {
        if (!response.headers.has(name)) response.headers.set(name, value);
      }
    },
  };
}
