import type { Plugin } from 'graphql-yoga';
import { estimateCost } from '../graphql-cost';
import type { ClientKeyOf } from './client-key';
import type { ClientLimiter } from './limiter';
import { costBudgetExceeded, limiterUnavailable, rateLimitHeaders, tooManyRequests } from './responses';

export interface RateLimitOptions {
  /** Requests per client per minute, both APIs; absent: not limited. */
  requests?: ClientLimiter;
  /** Estimated GraphQL cost per client per minute; absent: not limited. */
  cost?: ClientLimiter;
  clientKey: ClientKeyOf;
  /** Executions whose documents the server wrote (the /api/v1 operations): no cost is charged. */
  isTrusted: (context: unknown) => boolean;
}

type Api = 'rest' | 'graphql';

/**
 * The APIs and the pages are counted: every kind of answer an anonymous client can ask for again
 * and again (GraphiQL's 9 MB page, the docs' 1.7 MB bundle) spends its budget. Health checks and
 * /metrics are not (a monitor must never be refused). The pages answer a refusal in REST's shape.
 */
function countedApi(url: URL): Api | undefined {
  const { pathname } = url;
  if (pathname === '/graphql' || pathname === '/graphql/') return 'graphql';
  if (pathname.startsWith('/api/v1/') || pathname === '/api/v1' || pathname.startsWith('/docs'))
    return 'rest';
  return undefined;
}

export function useRateLimits({ requests, cost, clientKey, isTrusted }: RateLimitOptions): Plugin {
  // One key per request, shared by the request count and the cost charges of its operations.
  const keys = new WeakMap<Request, Promise<string>>();
  const headersOf = new WeakMap<Request, Record<string, string>>();
  const keyOf = (request: Request, serverContext: unknown) => {
    let key = keys.get(request);
    if (!key) keys.set(request, (key = clientKey(request, serverContext)));
    return key;
  };

  return {
    // Both hooks stay synchronous when they have nothing to count: a returned promise makes
    // every request wait a microtask turn for nothing.
    onRequest({ request, url, serverContext, endResponse }) {
      const api = countedApi(url);
      if (!api) return;
      if (!requests) {
        if (api === 'graphql' && cost) void keyOf(request, serverContext);
        return;
      }
      return (async () => {
        const allowance = await requests.consume(await keyOf(request, serverContext), 1);
        if (allowance === 'unavailable') return endResponse(limiterUnavailable(api));
        if (!allowance.allowed) return endResponse(tooManyRequests(api, allowance));
        headersOf.set(request, rateLimitHeaders(allowance));
      })();
    },
    onExecute({ args, setResultAndStopExecution }) {
      if (!cost || isTrusted(args.contextValue)) return;
      const request = (args.contextValue as { request?: Request }).request;
      const key = request && keys.get(request);
      if (!key) return;
      const points = Math.max(
        1,
        Math.ceil(estimateCost(args.document, args.operationName, args.variableValues)),
      );
      return (async () => {
        const allowance = await cost.consume(await key, points);
        if (allowance === 'unavailable' || allowance.allowed) return;
        setResultAndStopExecution({ errors: [costBudgetExceeded(allowance)] });
      })();
    },
    onResponse({ request, response }) {
      const headers = headersOf.get(request);
      if (!headers || response.status === 429) return;
      for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    },
  };
}
