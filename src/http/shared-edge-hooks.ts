import type { Plugin } from 'graphql-yoga';

type OnRequest = NonNullable<Plugin['onRequest']>;
type OnResponse = NonNullable<Plugin['onResponse']>;
type RequestPayload = Parameters<OnRequest>[0];
type ResponsePayload = Parameters<OnResponse>[0];
type EdgeHooks = Pick<Plugin, 'onRequest' | 'onResponse'>;
type Step = ReturnType<OnRequest> | ReturnType<OnResponse>;

const isPromise = (value: Step): value is Promise<void> =>
  typeof (value as Promise<void> | undefined)?.then === 'function';

/** Runs `hooks` from `index` in order while `go()` holds, waiting on any that returns a promise. */
function runFrom<P>(hooks: ((payload: P) => Step)[], payload: P, index: number, go: () => boolean) {
  for (let at = index; at < hooks.length && go(); at++) {
    const step = hooks[at]!(payload);
    if (isPromise(step)) return step.then((): Promise<void> | void => runFrom(hooks, payload, at + 1, go));
  }
  return undefined;
}

function sharedOnRequest(hooks: OnRequest[]): OnRequest {
  return (payload: RequestPayload) => {
    const { endResponse, setRequest, setRequestHandler, fetchAPI } = payload;
    // The server's `url` parses on each read until it hands the next hook the parsed one.
    if (!(payload.url instanceof URL))
      payload.url = new fetchAPI.URL(payload.request.url, 'http://localhost');
    let ended = false;
    // What the server would hand the next hook: the request and handler as the last one set them.
    payload.endResponse = (response) => {
      if (response) ended = true;
      endResponse(response);
    };
    payload.setRequest = (request) => {
      payload.request = request;
      setRequest(request);
    };
    payload.setRequestHandler = (handler) => {
      payload.requestHandler = handler;
      setRequestHandler(handler);
    };
    return runFrom(hooks, payload, 0, () => !ended);
  };
}

function sharedOnResponse(hooks: OnResponse[]): OnResponse {
  return (payload: ResponsePayload) => {
    const { setResponse } = payload;
    payload.setResponse = (response) => {
      payload.response = response;
      setResponse(response);
    };
    return runFrom(hooks, payload, 0, () => true);
  };
}

/**
 * One `onRequest` and one `onResponse` for all of `plugins`, in their order, first in the list:
 * the server builds a payload (with three closures) and a promise step per hook per request, and
 * ~12 of our plugins only look at a request's start or end. The hooks run as the server would
 * run them (in order, each waited for, none after a response is ended), on one payload. The
 * plugins keep their other hooks, in place. Yoga's own plugins have no request or response hooks
 * between ours, so the order against them is unchanged.
 */
export function shareEdgeHooks<T extends object>(plugins: T[]): (T | EdgeHooks)[] {
  const onRequest: OnRequest[] = [];
  const onResponse: OnResponse[] = [];
  const rest = plugins.map((plugin) => {
    const { onRequest: start, onResponse: end, ...others } = plugin as T & EdgeHooks;
    if (!start && !end) return plugin;
    if (start) onRequest.push(start);
    if (end) onResponse.push(end);
    return others as T;
  });
  const shared: EdgeHooks = {
    ...(onRequest.length > 0 ? { onRequest: sharedOnRequest(onRequest) } : {}),
    ...(onResponse.length > 0 ? { onResponse: sharedOnResponse(onResponse) } : {}),
  };
  return [shared, ...rest];
}
