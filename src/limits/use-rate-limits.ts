import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { estimateCost, estimateDatabaseWork } from '../graphql-cost';
import type { Edge, ServerContext } from '../http/router';
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
const COUNTED_PATHS: Record<string, Api> = {
  '/graphql': 'graphql',
  '/graphql/': 'graphql',
  '/api/v1': 'rest',
};
const COUNTED_PREFIXES: Record<string, Api> = { '/api/v1/': 'rest', '/docs': 'rest', '/graphiql/': 'rest' };

/**
 * What a request's key is remembered by: its node:http request, which the operations the REST
 * adapter runs for it (with a Request of their own) share; in-process, the Request.
 */
const holderOf = (request: Request, serverContext: unknown): object =>
  (serverContext as { req?: object } | null)?.req ?? request;

export function useRateLimits({ requests, cost, clientKey, isTrusted }: RateLimitOptions): {
  plugin: Plugin;
  edge: Edge;
} {
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
  const admit = (allowance: Allowance | 'unavailable', api: Api, request: Request) => {
    if (allowance === 'unavailable') return limiterUnavailable(api);
    if (!allowance.allowed) return tooManyRequests(api, allowance);
    allowances.set(request, allowance);
  };
  const charge = (
    allowance: Allowance | 'unavailable',
    stop: (result: { errors: GraphQLError[] }) => void,
  ) => {
    if (allowance === 'unavailable' || allowance.allowed) return;
    stop({ errors: [costBudgetExceeded(allowance)] });
  };

  // Both steps stay synchronous when the key is known and the counts are this process's (no
  // shared store): a returned promise makes every request wait a microtask turn for nothing.
  const count = (api: Api) => (request: Request, _url: URL, serverContext: ServerContext) => {
    if (!requests) {
      if (cost) void keyOf(request, serverContext);
      return;
    }
    const key = keyOf(request, serverContext);
    if (typeof key === 'string' && requests.consumeNow)
      return admit(requests.consumeNow(key, 1), api, request);
    return (async () => admit(await requests.consume(await key, 1), api, request))();
  };
  const counters = { graphql: count('graphql'), rest: count('rest') };
  const counted = (apis: Record<string, Api>) =>
    Object.fromEntries(Object.entries(apis).map(([path, api]) => [path, counters[api]]));
  const edge: Edge = {
    routes: { paths: counted(COUNTED_PATHS), prefixes: counted(COUNTED_PREFIXES) },
    onResponse(request, response) {
      const allowance = allowances.get(request);
      if (!allowance || response.status === 429) return;
      setRateLimitHeaders(response.headers, allowance);
    },
  };

  const plugin: Plugin = {
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
  };
  return { plugin, edge };
}
