import type { Plugin } from 'graphql-yoga';
import { Response } from './fetch-api';
import { compress, negotiateEncoding, type Encoding } from './use-compression';

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
  let identity: Promise<Buffer> | undefined;
  const encoded = new Map<Encoding, Promise<Buffer>>();
  const page = () =>
    (identity ??= render().then(
      (html) => Buffer.from(html, 'utf8'),
      (error: unknown) => {
        identity = undefined;
        throw error;
      },
    ));
  const pageIn = (encoding: Encoding) => {
    let bytes = encoded.get(encoding);
    if (!bytes) {
      bytes = page().then((html) => compress(html, encoding));
      bytes.catch(() => encoded.delete(encoding));
      encoded.set(encoding, bytes);
    }
    return bytes;
  };

  return {
    onRequest({ request, url, endResponse }) {
      if (!wantsGraphiql(request, url.pathname)) return;
      const encoding = compressed ? negotiateEncoding(request.headers.get('accept-encoding')) : undefined;
      return (async () => {
        const body = encoding ? await pageIn(encoding) : await page();
        const headers: Record<string, string> = {
          'content-type': 'text/html; charset=utf-8',
          'content-length': String(body.byteLength),
          'cache-control': 'no-cache',
        };
        if (compressed) headers.vary = 'Accept-Encoding';
        if (encoding) headers['content-encoding'] = encoding;
        // A view of the shared bytes, not a copy.
        const view = new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength);
        endResponse(new Response(view, { status: 200, headers }));
      })();
    },
  };
}
