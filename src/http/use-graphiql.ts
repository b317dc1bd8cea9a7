import type { Plugin } from 'graphql-yoga';
import { Response } from './fetch-api';
import { sharedBody, viewOf } from './shared-body';
import { negotiateEncoding } from './use-compression';

export interface GraphiqlOptions {
  /** Renders the page; called once per process, on the first visit. */
  render: () => Promise<string>;
  /** Also keep br and gzip copies (COMPRESSION_MIN_BYTES > 0). */
  compressed: boolean;
}

/** Yoga's own test: a browser asking /graphql for HTML. */
function wantsGraphiql(request: Request, pathname: string): boolean {
  return (
    request.method === 'GET' &&
    (pathname === '/graphql' || pathname === '/graphql/') &&
    (request.headers.get('accept') ?? '').includes('text/html')
  );
}

/**
 * GraphiQL's page (9 MB: the editor, inline, no CDN) built once per process and compressed once
 * per encoding, then every visit shares the same bytes. Yoga's own GraphiQL rendered and the
 * compression plugin compressed it anew on each load (0.33 CPU-s, 9 MB held per request: 150
 * visitors that never read took a process from 344 MB to 4.24 GB). Placed after the rate limits,
 * so a page load is a counted request like any other.
 */
export function useGraphiql({ render, compressed }: GraphiqlOptions): Plugin {
  const page = sharedBody(async () => Buffer.from(await render(), 'utf8'));

  return {
    onRequest({ request, url, endResponse }) {
      if (!wantsGraphiql(request, url.pathname)) return;
      const encoding = compressed ? negotiateEncoding(request.headers.get('accept-encoding')) : undefined;
      return (async () => {
        const body = await page.bytes(encoding);
        const headers: Record<string, string> = {
          'content-type': 'text/html; charset=utf-8',
          'content-length': String(body.byteLength),
          'cache-control': 'no-cache',
        };
        if (compressed) headers.vary = 'Accept-Encoding';
        if (encoding) headers['content-encoding'] = encoding;
        endResponse(new Response(viewOf(body), { status: 200, headers }));
      })();
    },
  };
}
