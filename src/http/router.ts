import type { Plugin } from 'graphql-yoga';
import type { Response } from './fetch-api';

/** The server context whatwg-node hands a request (node:http's `req` and `res`, `waitUntil`). */
export type ServerContext = Record<string, unknown>;

/** A step's answer: a Response ends the request there; nothing passes it on to the next step. */
export type Answer = Response | undefined | void;

/**
 * One concern's work on a request that reaches it, called with positional arguments: nothing is
 * built per request to call it (whatwg-node builds a payload with three closures, and envelop's
 * iteration a few promise-likes, for every `onRequest` hook registered, ~1.5–2 KB a request each
 * whether the hook acts or not).
 */
export type Step = (request: Request, url: URL, serverContext: ServerContext) => Answer | Promise<Answer>;

/** Work on the answer: may return another response to send instead. */
export type ResponseStep = (
  request: Request,
  response: Response,
  serverContext: ServerContext,
) => Answer | Promise<Answer>;

/**
 * Where a concern acts: `paths` by exact pathname, `prefixes` by the longest one a pathname
 * starts with, `other` on every pathname neither names. A `null` step names a path the concern
 * leaves alone (e.g. the 404 leaves `/graphql` to Yoga).
 */
export interface Routes {
  paths?: Readonly<Record<string, Step | null>>;
  prefixes?: Readonly<Record<string, Step | null>>;
  other?: Step;
}

/** What one concern does at a request's two edges: its routes on the way in, a step on the answer. */
export interface Edge {
  routes?: Routes;
  onResponse?: ResponseStep;
}

const isPromise = <T>(value: T | Promise<T>): value is Promise<T> =>
  typeof (value as Promise<T> | undefined)?.then === 'function';

function longestPrefix(pathname: string, prefixes: Readonly<Record<string, unknown>> | undefined) {
  let found: string | undefined;
  for (const prefix of Object.keys(prefixes ?? {}))
    if (pathname.startsWith(prefix) && prefix.length > (found?.length ?? -1)) found = prefix;
  return found;
}

/** The steps a pathname goes through, in the edges' order (a prefix key: a path under it). */
function stepsOf(edges: readonly Edge[], key: string, isPrefix: boolean): Step[] {
  const steps: Step[] = [];
  for (const { routes } of edges) {
    if (!routes) continue;
    let step: Step | null | undefined;
    if (!isPrefix && routes.paths && Object.hasOwn(routes.paths, key)) step = routes.paths[key];
    else {
      const prefix = longestPrefix(key, routes.prefixes);
      step = prefix === undefined ? routes.other : routes.prefixes![prefix];
    }
    if (step) steps.push(step);
  }
  return steps;
}

/** Runs `steps` from `from` until one answers; waits for a step that returns a promise. */
function runSteps(
  steps: readonly Step[],
  from: number,
  request: Request,
  url: URL,
  serverContext: ServerContext,
  endResponse: (response: Response) => void,
): void | Promise<void> {
  for (let index = from; index < steps.length; index++) {
    const answer = steps[index]!(request, url, serverContext);
    if (!answer) continue;
    if (!isPromise(answer)) return endResponse(answer);
    return answer.then((answered) =>
      answered ? endResponse(answered) : runSteps(steps, index + 1, request, url, serverContext, endResponse),
    );
  }
}

/** Runs the response steps from `from`, each on the answer the one before left. */
function runResponseSteps(
  steps: readonly ResponseStep[],
  from: number,
  request: Request,
  response: Response,
  serverContext: ServerContext,
  setResponse: (response: Response) => void,
): void | Promise<void> {
  for (let index = from; index < steps.length; index++) {
    const answer = steps[index]!(request, response, serverContext);
    if (!answer) continue;
    if (!isPromise(answer)) {
      setResponse((response = answer));
      continue;
    }
    return answer.then((replaced) => {
      if (replaced) setResponse(replaced);
      return runResponseSteps(steps, index + 1, request, replaced ?? response, serverContext, setResponse);
    });
  }
}

/**
 * One `onRequest` and one `onResponse` for every edge given, in their order: the route of each
 * pathname (which steps of which concerns it meets) is decided once, at start, into a Map by
 * exact path and a short list of prefixes, so a request pays one lookup, then calls only the steps
 * on its path. The hooks are the server's own payloads; nothing is kept past the request.
 */
export function useRouter(edges: readonly Edge[]): Plugin {
  const exact = new Map<string, Step[]>();
  for (const { routes } of edges)
    for (const path of Object.keys(routes?.paths ?? {})) exact.set(path, stepsOf(edges, path, false));
  const prefixes = [...new Set(edges.flatMap(({ routes }) => Object.keys(routes?.prefixes ?? {})))]
    .sort((a, b) => b.length - a.length)
    .map((prefix) => [prefix, stepsOf(edges, prefix, true)] as const);
  // Every other pathname: no path or prefix of any edge is one of its.
  const others = stepsOf(edges, '\u0000', true);
  const responseSteps = edges.flatMap(({ onResponse }) => (onResponse ? [onResponse] : []));

  const route = (pathname: string): Step[] => {
    const steps = exact.get(pathname);
    if (steps) return steps;
    for (const [prefix, under] of prefixes) if (pathname.startsWith(prefix)) return under;
    return others;
  };

  return {
    onRequest({ request, url, serverContext, endResponse }) {
      const steps = route(url.pathname);
      if (steps.length > 0) return runSteps(steps, 0, request, url, serverContext, endResponse);
    },
    ...(responseSteps.length > 0
      ? {
          onResponse({ request, response, serverContext, setResponse }) {
            return runResponseSteps(responseSteps, 0, request, response, serverContext, setResponse);
          },
        }
      : {}),
  };
}
