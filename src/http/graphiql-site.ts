import { createHash } from 'node:crypto';

/**
 * GraphiQL as a small page and versioned files. The editor's package ships its script (5 MB),
 * styles (0.8 MB), three Monaco workers (2.7 MB) and icon (0.15 MB) as strings that its own
 * renderer inlines into one 9 MB page, which no browser can cache apart from the page. Here each is
 * a file whose name holds a hash of its bytes, so it can be cached for a year and never
 * revalidated; the page that names them is 2 KB and is the only thing a second visit fetches.
 */

/** What `@graphql-yoga/render-graphiql/graphiql` exports. */
export interface GraphiqlBundle {
  js: string;
  css: string;
  favicon: string;
  editorWorkerService: string;
  jsonWorker: string;
  graphqlWorker: string;
}

/** The page's settings for GraphiQL (Yoga's GraphiQLOptions): title, default query, method… */
export type GraphiqlSettings = { title: string } & Record<string, unknown>;

export interface SiteFile {
  body: Buffer;
  contentType: string;
  /** A strong validator: the body's hash. */
  etag: string;
}

export interface GraphiqlSite {
  page: SiteFile;
  /** By path: `${prefix}<name>.<hash>.<extension>`. */
  assets: ReadonlyMap<string, SiteFile>;
}

const JAVASCRIPT = 'text/javascript; charset=utf-8';

function hashOf(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url').slice(0, 16);
}

/** `data:image/x-icon;base64,…` as bytes and type. */
function fromDataUri(uri: string): { body: Buffer; contentType: string } {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(uri);
  if (!match) throw new Error('GraphiQL’s favicon is not a base64 data URI');
  return { body: Buffer.from(match[2] as string, 'base64'), contentType: match[1] as string };
}

/** Text inside a <script> element: no `</script>` or `<!--` can end it early. */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"]/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char] ?? char,
  );

export function buildGraphiqlSite(
  bundle: GraphiqlBundle,
  settings: GraphiqlSettings,
  prefix: string,
): GraphiqlSite {
  const assets = new Map<string, SiteFile>();
  const add = (name: string, extension: string, body: Buffer, contentType: string): string => {
    const hash = hashOf(body);
    const assetPath = `${prefix}${name}.${hash}.${extension}`;
    assets.set(assetPath, { body, contentType, etag: `"${hash}"` });
    return assetPath;
  };
  const text = (value: string) => Buffer.from(value, 'utf8');
  const icon = fromDataUri(bundle.favicon);
  const paths = {
    icon: add('favicon', 'ico', icon.body, icon.contentType),
    css: add('graphiql', 'css', text(bundle.css), 'text/css; charset=utf-8'),
    js: add('graphiql', 'js', text(bundle.js), JAVASCRIPT),
    workers: {
      editorWorkerService: add('editor-worker', 'js', text(bundle.editorWorkerService), JAVASCRIPT),
      json: add('json-worker', 'js', text(bundle.jsonWorker), JAVASCRIPT),
      graphql: add('graphql-worker', 'js', text(bundle.graphqlWorker), JAVASCRIPT),
    },
  };

  // The renderer's own page, with files where it inlined them; Monaco is told where its workers are
  // before its script runs.
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(settings.title)}</title>
    <link rel="icon" href="${paths.icon}" />
    <link rel="stylesheet" href="${paths.css}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${scriptSafeJson(paths.workers)};
      self['MonacoEnvironment'] = {
        globalAPI: false,
        getWorkerUrl: function (moduleId, label) {
          return new URL(workers[label], location.href).href;
        },
      };
    </script>
    <script src="${paths.js}"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(window.document.querySelector('#root'), ${scriptSafeJson(settings)});
    </script>
  </body>
</html>
`;
  const page = text(html);
  return { page: { body: page, contentType: 'text/html; charset=utf-8', etag: `"${hashOf(page)}"` }, assets };
}
