import type { Plugin } from 'graphql-yoga';
import { etagOf } from './etag';
import type { Edge } from './router';
import { ifNoneMatchMatches } from './headers';

export interface HttpCachingOptions {
  /** `Cache-Control` of results anyone may share (public product reads). */
  publicCacheControl: string;
}

interface ResponseCacheMetadata {
  hit?: boolean;
  didCache?: boolean;
}

interface CachingDecision {
  headers: Record<string, string>;
  /** Set on GET reads only: the validator of the body and whether the client already holds it. */
  etag?: string;
  notModified?: boolean;
}

/**
 * HTTP caching for /graphql: the response cache's verdict (`extensions.responseCache`, which is
 * removed from the body) becomes `X-Cache: HIT|MISS`, a public `Cache-Control` for a shareable
 * result or `private, no-store` for anything that consulted the viewer, failed or holds an order,
 * and on GET a strong `ETag` with 304 for a matching `If-None-Match`.
 */
export function useHttpCaching({ publicCacheControl }: HttpCachingOptions): { plugin: Plugin; edge: Edge } {
  const decisions = new WeakMap<Request, CachingDecision>();
  const plugin: Plugin = {
    onExecutionResult({ request, result, setResult }) {
      if (!result || Symbol.asyncIterator in result) return;
      const metadata = (result.extensions as { responseCache?: ResponseCacheMetadata } | undefined)
        ?.responseCache;
      if (!metadata) return;
      const { responseCache: _removed, ...extensions } = result.extensions as Record<string, unknown>;
      const stripped = { ...result, extensions: Object.keys(extensions).length > 0 ? extensions : undefined };
      if (!stripped.extensions) delete stripped.extensions;
      setResult(stripped);
      const shareable = metadata.hit === true || metadata.didCache === true;
      const decision: CachingDecision = {
        headers: {
          'x-cache': metadata.hit ? 'HIT' : 'MISS',
          'cache-control': shareable ? publicCacheControl : 'private, no-store',
          vary: 'Accept, Accept-Encoding',
        },
      };
      if (shareable && request.method === 'GET') {
        decision.etag = etagOf(JSON.stringify(stripped));
        decision.notModified = ifNoneMatchMatches(request.headers.get('if-none-match'), decision.etag);
      }
      decisions.set(request, decision);
    },
    onResultProcess({ request, setResultProcessor, acceptableMediaTypes }) {
      const decision = decisions.get(request);
      if (!decision?.notModified) return;
      setResultProcessor(
        (_result, fetchAPI) => new fetchAPI.Response(null, { status: 304 }),
        acceptableMediaTypes[0] ?? 'application/json',
      );
    },
  };
  const edge: Edge = {
    onResponse(request, response) {
      const decision = decisions.get(request);
      if (!decision) return;
      for (const [name, value] of Object.entries(decision.headers)) response.headers.set(name, value);
      if (decision.etag) response.headers.set('etag', decision.etag);
    },
  };
  return { plugin, edge };
}
