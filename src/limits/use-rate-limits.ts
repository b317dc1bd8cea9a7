import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { estimateCost, estimateDatabaseWork } from '../graphql-cost';
import type { ClientKeyOf } from './client-key';
import type { Allowance, ClientLimiter } from './limiter';
import { costBudgetExceeded, limiterUnavailable, setRateLimitHeaders, tooManyRequests } from './responses';

export interface RateLimitOptions {
  /** Requests per client per minute, both APIs; absent: not limited. */
  requests?: ClientLimiter;
  /**
   * Estimated database cost per client per minute, both APIs (the /api/v1 operations priced by
   * the same estimate as any GraphQL document); absent: not limited.
   */
  cost?: ClientLimiter;
  clientKey: ClientKeyOf;
  /** Executions whose documents the server wrote (the /api/v1 operations): priced by their database work only. */
  isTrusted: (context: unknown) => boolean;
}

type Api = 'rest' | 'graphql';

/**
 * The APIs and the pages are counted: every kind of answer an anonymous client can ask for again
 * and again (GraphiQL's 5 MB script, the docs' 1.7 MB bundle) spends its budget. Health checks and
 * /metrics are not (a monitor must never be refused). The pages answer a refusal in REST's shape.
 */
function countedApi(url: URL): Api | undefined {
  const { pathname } = url;
  if (pathname === '/graphql' || pathname === '/graphql/') return 'graphql';
  if (
    pathname.startsWith('/api/v1/') ||
    pathname === '/api/v1' ||
    pathname.startsWith('/docs') ||
    pathname.startsWith('/graphiql/')
  )
    return 'rest';
  return undefined;
}

/**
 * What a request's key is remembered by: its node:http request, which the operations the REST
 * adapter runs for it (with a Request of their own) share; in-process, the Request.
 */
const holderOf = (request: Request, serverContext: unknown): object =>
  (serverContext as { req?: object } | null)?.req ?? request;

export function useRateLimits({ requests, cost, clientKey, isTrusted }: RateLimitOptions): Plugin {
  // One key per request, shared by the request count and the cost charges of its operations.
  const keys = new WeakMap<object, string | Promise<string>>();
  const allowances = new WeakMap<Request, Allowance>();
  const keyOf = (request: Request, serverContext: unknown) => {
    const holder = holderOf(request, serverContext);
    let key = keys.get(holder);
    if (key === undefined) keys.set(holder, (key = clientKey(request, serverContext)));
    return key;
  };

  // Made once, not per request (a closure per request is also a name tsx sets on it).
  const admit = (
    allowance: Allowance | 'unavailable',
    api: Api,
    request: Request,
    endResponse: (response: Response) => void,
  ) => {
    if (allowance === 'unavailable') return endResponse(limiterUnavailable(api));
    if (!allowance.allowed) return endResponse(tooManyRequests(api, allowance));
    allowances.set(request, allowance);
  };
  const charge = (
    allowance: Allowance | 'unavailable',
    stop: (result: { errors: GraphQLError[] }) => void,
  ) => {
    if (allowance === 'unavailable' || allowance.allowed) return;
    stop({ errors: [costBudgetExceeded(allowance)] });
  };

  return {
    // Both hooks stay synchronous when the key is known and the counts are this process's (no
    // shared store): a returned promise makes every request wait a microtask turn for nothing.
    onRequest({ request, url, serverContext, endResponse }) {
      const api = countedApi(url);
      if (!api) return;
      if (!requests) {
        if (cost) void keyOf(request, serverContext);
        return;
      }
      const key = keyOf(request, serverContext);
      if (typeof key === 'string' && requests.consumeNow)
        return admit(requests.consumeNow(key, 1), api, request, endResponse);
      return (async () => admit(await requests.consume(await key, 1), api, request, endResponse))();
    },
    onExecute({ args, setResultAndStopExecution }) {
      if (!cost) return;
      const context = args.contextValue as { request?: Request; req?: object };
      const key = context.request && keys.get(holderOf(context.request, context));
      if (key === undefined) return;
      const price = isTrusted(context) ? estimateDatabaseWork : estimateCost;
      const points = Math.max(1, Math.ceil(price(args.document, args.operationName, args.variableValues)));
      if (typeof key === 'string' && cost.consumeNow)
        return charge(cost.consumeNow(key, points), setResultAndStopExecution);
      return (async () => charge(await cost.consume(await key, points), setResultAndStopExecution))();
    },
    onResponse({ request, response }) {
      const allowance = allowances.get(request);
      if (!allowance || response.status === 429) return;
      setRateLimitHeaders(response.headers, allowance);
    },
  };
}
