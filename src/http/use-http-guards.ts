import type { Plugin } from 'graphql-yoga';
import { SECURITY_HEADERS } from './headers';

export interface HttpGuardOptions {
  /** Largest request body accepted, in bytes (both APIs). */
  maxBodyBytes: number;
}

/** GraphiQL is one inline page (no CDN), so its scripts and styles are inline too. */
const HTML_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; style-src 'self' 'unsafe-inline'; " +
    "img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  ...SECURITY_HEADERS,
};

const tooLarge = (limit: number) =>
  new Response(JSON.stringify({ message: `The request body must not be larger than ${limit} bytes.` }), {
    status: 413,
    headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' },
  });

/** Refuses oversized bodies before anything reads them, and hardens every HTML page. */
export function useHttpGuards({ maxBodyBytes }: HttpGuardOptions): Plugin {
  return {
    onRequest({ request, endResponse }) {
      const length = Number(request.headers.get('content-length') ?? '0');
      if (Number.isFinite(length) && length > maxBodyBytes) endResponse(tooLarge(maxBodyBytes));
    },
    onResponse({ response }) {
      if (!response.headers.get('content-type')?.startsWith('text/html')) return;
      for (const [name, value] of Object.entries(HTML_SECURITY_HEADERS)) {
        if (!response.headers.has(name)) response.headers.set(name, value);
      }
    },
  };
}
