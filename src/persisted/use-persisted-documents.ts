import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { PersistedOperationsConfig } from '../config';
import type { ClientKeyOf } from '../limits/client-key';
import type { SharedRedis } from '../store/redis';
import { createApqStore } from './apq-store';
import { documentHash, loadManifest, manifestOf, type Manifest } from './manifest';

// Apollo's answers (status 200, not cacheable), which Apollo Client's persisted-queries link expects.
const APQ_HTTP = { status: 200, headers: { 'cache-control': 'private, no-cache, must-revalidate' } };

const persistedQueryHash = (extensions: unknown): string | undefined => {
  const persisted = (extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null)
    ?.persistedQuery;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string'
    ? persisted.sha256Hash
    : undefined;
};

/**
 * Every document the server knows by hash before any client registers one: the built-in ones
 * (/api/v1's operations, runnable by hash in every mode) and the manifest's.
 */
export function knownDocuments(
  { mode, manifestPath }: PersistedOperationsConfig,
  builtIn: Iterable<string>,
): Manifest {
  return new Map([
    ...manifestOf(builtIn),
    ...(mode !== 'off' && manifestPath ? loadManifest(manifestPath) : []),
  ]);
}

/**
 * Yoga's persisted-operations plugin over our stores. `apq`: any document runs, and one sent with
 * its hash is registered (once it validated and reached execution) for everyone to run by hash.
 * `trusted-only`: only the manifest's documents (and the /api/v1 operations) run. /api/v1 itself
 * executes through `getEnveloped`, below these HTTP-level hooks, so no mode can block it.
 */
export function persistedDocumentPlugins(
  { mode }: PersistedOperationsConfig,
  fixed: Manifest,
  clientKey: ClientKeyOf,
  redis?: SharedRedis,
): Plugin[] {
  if (mode === 'off') return [];

  if (mode === 'trusted-only') {
    const error = (message: string, code: string) => ({
      message,
      extensions: { code, http: { status: 400 } },
    });
    return [
      usePersistedOperations({
        allowArbitraryOperations: false,
        // The manifest is in memory: trusted documents run whatever happens to Redis.
        getPersistedOperation: (hash) => fixed.get(hash) ?? null,
        customErrors: {
          persistedQueryOnly: error(
            'Only trusted documents run here: send extensions.persistedQuery.sha256Hash of a document in the manifest, without the query.',
            'PERSISTED_QUERY_ONLY',
          ),
          notFound: error(
            'PersistedQueryNotFound: no trusted document has this hash.',
            'PERSISTED_QUERY_NOT_FOUND',
          ),
          keyNotFound: error(
            'Send extensions.persistedQuery ({"version":1,"sha256Hash":"…"}) of a trusted document.',
            'PERSISTED_QUERY_ID_REQUIRED',
          ),
        },
      }),
    ];
  }

  const store = createApqStore({ fixed, redis });
  const registration: Plugin = {
    onParams({ params }) {
      const hash = persistedQueryHash(params.extensions);
      if (hash && params.query && documentHash(params.query) !== hash) {
        throw createGraphQLError('provided sha does not match query', {
          extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
        });
      }
    },
    // Synchronous unless there is something to register (most executions).
    onExecute({ args }) {
      const context = args.contextValue as {
        params?: { query?: string; extensions?: unknown };
        request?: Request;
      };
      const { params, request } = context;
      const hash = persistedQueryHash(params?.extensions);
      if (hash && params?.query && request) {
        const document = params.query;
        return Promise.resolve(clientKey(request, context)).then((client) =>
          store.set(hash, document, client),
        );
      }
    },
  };
  return [
    registration,
    usePersistedOperations({
      allowArbitraryOperations: true,
      getPersistedOperation: async (hash) => (await store.get(hash)) ?? null,
      customErrors: {
        notFound: {
          message: 'PersistedQueryNotFound',
          extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: APQ_HTTP },
        },
        keyNotFound: { message: 'Must provide query string.', extensions: { http: { status: 400 } } },
      },
    }),
  ];
}
