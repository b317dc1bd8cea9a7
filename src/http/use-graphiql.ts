import { Response } from './fetch-api';
import type { Edge } from './router';
import {
  buildGraphiqlSite,
  type GraphiqlBundle,
  type GraphiqlSettings,
  type SiteFile,
} from './graphiql-site';
import { ifNoneMatchMatches, SECURITY_HEADERS } from './headers';
import { sharedBody, viewOf, type SharedBody } from './shared-body';
import { negotiateEncoding } from './use-compression';

export interface GraphiqlOptions {
  /** GraphiQL's script, styles, workers and icon; loaded once per process, on the first visit. */
  loadBundle: () => Promise<GraphiqlBundle>;
  /** What the page tells GraphiQL (title, default query, method). */
  settings: GraphiqlSettings;
  /** Also keep br and gzip copies (COMPRESSION_MIN_BYTES > 0). */
  compressed: boolean;
}

/** Where the page's files are served; each name carries a hash of its bytes. */
export const GRAPHIQL_ASSETS_PREFIX = '/graphiql/';

/** Named by their content: a changed file is a new URL, so browsers keep these for a year unasked. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Yoga's own test (on /graphql): a browser asking for HTML. */
function wantsGraphiql(request: Request): boolean {
  return request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html');
}

interface Served {
  file: SiteFile;
  encoded: SharedBody;
  cacheControl: string;
}

/**
 * GraphiQL's page at /graphql (2 KB, revalidated with its ETag on every visit) and its files under
 * /graphiql/ (named by hash, cached for a year): a second visit transfers the page only, or a 304.
 * Built once per process on the first visit, each file compressed once per encoding and shared by
 * every request (compressed anew per load, 150 visitors that never read took a process to 4 GB).
 * Placed after the rate limits, so a page or file is a counted request like any other.
 */
export function graphiqlEdge({ loadBundle, settings, compressed }: GraphiqlOptions): Edge {
  let site: Promise<Map<string, Served>> | undefined;
  const served = () =>
    (site ??= loadBundle()
      .then((bundle) => {
        const built = buildGraphiqlSite(bundle, settings, GRAPHIQL_ASSETS_PREFIX);
        const entry = (file: SiteFile, cacheControl: string): Served => ({
          file,
          encoded: sharedBody(() => Promise.resolve(file.body)),
          cacheControl,
        });
        const files = new Map<string, Served>([['page', entry(built.page, 'no-cache')]]);
        for (const [assetPath, file] of built.assets) files.set(assetPath, entry(file, IMMUTABLE));
        return files;
      })
      .catch((error: unknown) => {
        site = undefined;
        throw error;
      }));

  const answer = async (request: Request, item: Served): Promise<Response> => {
    const { file } = item;
    const text = !file.contentType.startsWith('image/');
    const encoding =
      compressed && text && request.method === 'GET'
        ? negotiateEncoding(request.headers.get('accept-encoding'))
        : undefined;
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      'content-type': file.contentType,
      'cache-control': item.cacheControl,
      // Compressed, the bytes differ: the ETag is then only a weak validator for them.
      etag: encoding ? `W/${file.etag}` : file.etag,
    };
    if (compressed && text) headers.vary = 'Accept-Encoding';
    if (ifNoneMatchMatches(request.headers.get('if-none-match'), file.etag)) {
      return new Response(null, { status: 304, headers });
    }
    const body = encoding ? await item.encoded.bytes(encoding) : file.body;
    if (encoding) headers['content-encoding'] = encoding;
    headers['content-length'] = String(body.byteLength);
    return new Response(request.method === 'HEAD' ? null : viewOf(body), { status: 200, headers });
  };

  // An unknown file (e.g. a hash of an earlier version) falls through to the 404.
  const serve = async (request: Request, key: string) => {
    const item = (await served()).get(key);
    return item && answer(request, item);
  };
  const page = (request: Request) => (wantsGraphiql(request) ? serve(request, 'page') : undefined);
  const asset = (request: Request, url: URL) =>
    request.method === 'GET' || request.method === 'HEAD' ? serve(request, url.pathname) : undefined;
  return {
    routes: { paths: { '/graphql': page, '/graphql/': page }, prefixes: { [GRAPHIQL_ASSETS_PREFIX]: asset } },
  };
}
