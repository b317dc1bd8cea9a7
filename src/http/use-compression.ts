import { promisify } from 'node:util';
import zlib from 'node:zlib';
import Negotiator from 'negotiator';
import { Headers, Response } from './fetch-api';
import type { Edge } from './router';

export interface CompressionOptions {
  /** Bodies smaller than this many bytes are sent as they are. */
  minBytes: number;
}

export type Encoding = 'br' | 'gzip';
const ENCODINGS = ['br', 'gzip', 'identity'];

/** Whole bodies only: event streams and multipart (incremental delivery) are left alone. */
const COMPRESSIBLE =
  /^(?:application\/(?:json|graphql-response\+json|javascript)|text\/(?:html|css|javascript|plain)|image\/svg\+xml)\s*(?:;|$)/i;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Brotli at quality 4 is near gzip's speed with smaller output; 11 (zlib's default) took 30 ms on
 * a 20 KB product page and 40 s on the 9 MB GraphiQL page. Runs on libuv's thread pool.
 */
export function compress(body: Uint8Array, encoding: Encoding): Promise<Buffer> {
  if (encoding === 'gzip') return gzip(body, { level: 6 });
  return brotli(body, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
    },
  });
}

/** RFC 9110 negotiation with q-values (negotiator, as Express's `compression` uses); br wins ties. */
export function negotiateEncoding(acceptEncoding: string | null): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } });
  // negotiator 1.x takes `preferred` (the tie-break order); @types/negotiator predates it.
  const encoding = negotiator.encoding.bind(negotiator) as (
    available: string[],
    options: { preferred: string[] },
  ) => string | undefined;
  const chosen = encoding(ENCODINGS, { preferred: ENCODINGS });
  return chosen === 'br' || chosen === 'gzip' ? chosen : undefined;
}

function addVary(headers: Headers): void {
  const vary = headers.get('vary');
  if (!vary) headers.set('vary', 'Accept-Encoding');
  else if (!/(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(vary)) {
    headers.set('vary', `${vary}, Accept-Encoding`);
  }
}

/**
 * br or gzip for JSON, HTML, CSS and JavaScript bodies of at least `minBytes`, chosen by
 * Accept-Encoding. A compressed body keeps its identity ETag but weakened (`W/`): the bytes differ,
 * so it is no longer a strong validator for them, while If-None-Match (a weak comparison) still
 * gives 304 (whose ETag is weakened alike for a client that takes br or gzip). HEAD, 204, 304,
 * tiny bodies, already-encoded bodies and `Cache-Control: no-transform` go out as they are. Put it last among the plugins, so it sees the final response.
 */
export function compressionEdge({ minBytes }: CompressionOptions): Edge {
  return {
    onResponse(request, response) {
      const contentType = response.headers.get('content-type');
      const compressible = contentType !== null && COMPRESSIBLE.test(contentType);
      const etag = response.headers.get('etag');
      if (response.status === 304 && etag) {
        // The same validator the 200 would carry to this client (one that takes br or gzip).
        addVary(response.headers);
        if (!etag.startsWith('W/') && negotiateEncoding(request.headers.get('accept-encoding'))) {
          response.headers.set('etag', `W/${etag}`);
        }
        return;
      }
      if (compressible) addVary(response.headers);
      if (
        !compressible ||
        request.method === 'HEAD' ||
        response.status === 204 ||
        response.headers.has('content-encoding') ||
        /\bno-transform\b/i.test(response.headers.get('cache-control') ?? '')
      ) {
        return;
      }
      const encoding = negotiateEncoding(request.headers.get('accept-encoding'));
      // Checked after the negotiation: reading `body` makes whatwg-node build a stream.
      if (!encoding || !response.body) return;
      const declaredLength = Number(response.headers.get('content-length') ?? Number.NaN);
      if (declaredLength < minBytes) return;

      return (async () => {
        const body = new Uint8Array(await response.arrayBuffer());
        const headers = new Headers(response.headers);
        if (body.byteLength < minBytes) return new Response(body, { status: response.status, headers });
        const compressed = await compress(body, encoding);
        headers.set('content-encoding', encoding);
        headers.set('content-length', String(compressed.byteLength));
        if (etag && !etag.startsWith('W/')) headers.set('etag', `W/${etag}`);
        return new Response(new Uint8Array(compressed), { status: response.status, headers });
      })();
    },
  };
}
