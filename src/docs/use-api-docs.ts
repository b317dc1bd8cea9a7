import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Plugin } from 'graphql-yoga';
import { Response } from '../http/fetch-api';
import { ifNoneMatchMatches, SECURITY_HEADERS } from '../http/headers';
import { useRouter, type Edge } from '../http/router';
import { sharedBody, viewOf, type SharedBody } from '../http/shared-body';
import { negotiateEncoding } from '../http/use-compression';
import { createOpenApiDocument } from './openapi';

export interface ApiDocsOptions {
  /**
   * Public base URL of the service (no `/api/v1` suffix). Written into the document's `servers`
   * and allowed as a `connect-src` of the docs page, so "Try it out" can reach it.
   * Default: none; the document has no `servers` and the page talks to its own origin only.
   */
  serverUrl?: string;
  /**
   * Text files of at least this many bytes are also sent br or gzip (as Accept-Encoding allows),
   * each compressed once per process; 0 sends every file as it is. Default 1,024 (as
   * COMPRESSION_MIN_BYTES).
   */
  compressionMinBytes?: number;
}

/** The machine-readable document. Part of the /api/v1 surface, so it answers JSON like the rest. */
export const OPENAPI_PATH = '/api/v1/openapi.json';
/** The human-readable page; `/docs/` answers the same. */
export const DOCS_PATH = '/docs';
/** Static files of the page: swagger-ui-dist's, plus the page's own start script. */
export const DOCS_ASSETS_PREFIX = '/docs/assets/';

const ALLOWED_METHODS = 'GET, HEAD';

interface StaticFile {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
  etag: string;
  cacheControl: string;
  /** Its br and gzip bytes, when it is text worth compressing. */
  encoded?: SharedBody;
}

/** swagger-ui-dist's documented `absolutePath()`, loaded without evaluating its browser bundle. */
function swaggerUiDistDir(): string {
  const require = createRequire(import.meta.url);
  const absolutePath = require('swagger-ui-dist/absolute-path.js') as () => string;
  return absolutePath();
}

/** Starts Swagger UI on the page's root element; a file of its own so CSP can forbid inline script. */
const INIT_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-spec-url'),
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
    defaultModelsExpandDepth: 1,
    displayOperationId: true,
  });
})();
`;

const HTML_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Storefront API</title>
    <link rel="stylesheet" href="${DOCS_ASSETS_PREFIX}index.css">
    <link rel="stylesheet" href="${DOCS_ASSETS_PREFIX}swagger-ui.css">
    <link rel="icon" type="image/png" sizes="32x32" href="${DOCS_ASSETS_PREFIX}favicon-32x32.png">
    <link rel="icon" type="image/png" sizes="16x16" href="${DOCS_ASSETS_PREFIX}favicon-16x16.png">
  </head>
  <body>
    <noscript><p>This page needs JavaScript. The document itself is at <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</p></noscript>
    <div id="swagger-ui" data-spec-url="${OPENAPI_PATH}"></div>
    <script src="${DOCS_ASSETS_PREFIX}swagger-ui-bundle.js"></script>
    <script src="${DOCS_ASSETS_PREFIX}docs-init.js"></script>
  </body>
</html>
`;

/**
 * Content-Security-Policy of the page: everything from this origin only. Swagger UI sets inline
 * `style` attributes from script (allowed by CSSOM), and its CSS uses `data:` SVG icons.
 */
function contentSecurityPolicy(serverUrl: string | undefined): string {
  const connect = ["'self'"];
  if (serverUrl) connect.push(new URL(serverUrl).origin);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect.join(' ')}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Serves the OpenAPI document of /api/v1 and a Swagger UI page for it, with every asset from this
 * server (no CDN):
 * - `GET|HEAD /api/v1/openapi.json`: the document, `application/json; charset=utf-8`;
 * - `GET|HEAD /docs`: the HTML page; `GET|HEAD /docs/assets/<file>`: its scripts, styles and icons;
 * - any other method on those paths: 405 with `Allow: GET, HEAD`.
 * Put it before the REST adapter in Yoga's plugin list, since it answers a path under /api/v1.
 */
export function apiDocsEdge(options: ApiDocsOptions = {}): Edge {
  const { serverUrl, compressionMinBytes = 1_024 } = options;

  // Compressed once per process: the 1.7 MB bundle compressed anew per request, 300 clients at
  // once, took a process from 130 MB to 4.35 GB.
  const staticFile = (
    body: Uint8Array<ArrayBuffer>,
    contentType: string,
    cacheControl: string,
  ): StaticFile => {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const compressible =
      compressionMinBytes > 0 && body.byteLength >= compressionMinBytes && !contentType.startsWith('image/');
    const encoded = compressible ? sharedBody(() => Promise.resolve(Buffer.from(body))) : undefined;
    return { body, contentType, etag, cacheControl, encoded };
  };

  const noCache = 'no-cache';
  const dayLong = 'public, max-age=86400';
  const encoder = new TextEncoder();
  const spec = staticFile(
    encoder.encode(`${JSON.stringify(createOpenApiDocument({ serverUrl }), null, 2)}\n`),
    'application/json; charset=utf-8',
    noCache,
  );
  const page = staticFile(encoder.encode(HTML_PAGE), 'text/html; charset=utf-8', noCache);

  const distDir = swaggerUiDistDir();
  const fromDist = (name: string, contentType: string) =>
    staticFile(new Uint8Array(readFileSync(path.join(distDir, name))), contentType, dayLong);
  const assets = new Map<string, StaticFile>([
    ['swagger-ui.css', fromDist('swagger-ui.css', 'text/css; charset=utf-8')],
    ['index.css', fromDist('index.css', 'text/css; charset=utf-8')],
    ['swagger-ui-bundle.js', fromDist('swagger-ui-bundle.js', 'text/javascript; charset=utf-8')],
    ['favicon-32x32.png', fromDist('favicon-32x32.png', 'image/png')],
    ['favicon-16x16.png', fromDist('favicon-16x16.png', 'image/png')],
    ['docs-init.js', staticFile(encoder.encode(INIT_SCRIPT), 'text/javascript; charset=utf-8', noCache)],
  ]);

  const securityHeaders = {
    ...SECURITY_HEADERS,
    'content-security-policy': contentSecurityPolicy(serverUrl),
  };

  const json = (status: number, message: string, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify({ message }), {
      status,
      headers: { ...securityHeaders, ...headers, 'Content-Type': 'application/json; charset=utf-8' },
    });

  const serve = (request: Request, file: StaticFile | 'not-found'): Response | Promise<Response> => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return json(405, 'Method Not Allowed.', { Allow: ALLOWED_METHODS });
    }
    if (file === 'not-found') return json(404, 'Not Found.');

    const encoded = request.method === 'GET' ? file.encoded : undefined;
    const encoding = encoded && negotiateEncoding(request.headers.get('accept-encoding'));
    const headers: Record<string, string> = {
      ...securityHeaders,
      'Content-Type': file.contentType,
      'Cache-Control': file.cacheControl,
      // A compressed body is other bytes: its ETag is only a weak validator for them.
      ETag: encoding ? `W/${file.etag}` : file.etag,
    };
    if (file.encoded) headers.Vary = 'Accept-Encoding';
    const ifNoneMatch = request.headers.get('if-none-match');
    if (ifNoneMatchMatches(ifNoneMatch, file.etag)) return new Response(null, { status: 304, headers });
    if (!encoded || !encoding) {
      return new Response(request.method === 'HEAD' ? null : file.body, {
        status: 200,
        headers: { ...headers, 'Content-Length': String(file.body.byteLength) },
      });
    }
    return encoded.bytes(encoding).then(
      (body) =>
        new Response(viewOf(body), {
          status: 200,
          headers: { ...headers, 'Content-Encoding': encoding, 'Content-Length': String(body.byteLength) },
        }),
    );
  };

  const servePage = (request: Request) => serve(request, page);
  return {
    routes: {
      paths: {
        [OPENAPI_PATH]: (request) => serve(request, spec),
        [DOCS_PATH]: servePage,
        [`${DOCS_PATH}/`]: servePage,
      },
      prefixes: {
        [DOCS_ASSETS_PREFIX]: (request, url) =>
          serve(request, assets.get(url.pathname.slice(DOCS_ASSETS_PREFIX.length)) ?? 'not-found'),
      },
    },
  };
}

/** The same, as a plugin of its own. */
export function useApiDocs(options: ApiDocsOptions = {}): Plugin {
  return useRouter([apiDocsEdge(options)]);
}
