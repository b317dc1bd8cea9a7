import type { ServerResponse } from 'node:http';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { Edge } from './router';

/** What a request owns: a live stream, given back by `return()` (idempotent). */
interface Releasable {
  return?(): unknown;
}

export interface LiveStreamOwners {
  /**
   * Ties a stream to the request that opened it: it is given back when the request's response
   * turns out not to be an event stream (a batch, a 406), and when the response closes (the stream
   * ended, or the client left, even before the answer was written).
   */
  own(request: Request, stream: Releasable, serverContext: unknown): void;
  /** The hooks that give streams back; add it to the Yoga instance, and `edge` to its router. */
  plugin: Plugin;
  edge: Edge;
}

const EVENT_STREAM = 'text/event-stream';

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> & Releasable {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

function subscriptionInBatch() {
  return createGraphQLError(
    'A subscription cannot be sent in a batch: send it alone, with `Accept: text/event-stream`.',
    { extensions: { code: 'BAD_REQUEST' } },
  );
}

/**
 * The owner of every live subscription slot is its stream, and the stream's is the request: Yoga
 * subscribes before it knows whether the answer can be a stream at all (a batch is answered as
 * JSON, a request without `Accept: text/event-stream` 406), and such a stream was never read, so
 * never returned: each kept its slot until a restart.
 */
export function createLiveStreamOwners(): LiveStreamOwners {
  const owned = new WeakMap<Request, Set<Releasable>>();
  const release = (request: Request) => {
    const streams = owned.get(request);
    if (!streams) return;
    owned.delete(request);
    for (const stream of streams) void stream.return?.();
  };
  return {
    own(request, stream, serverContext) {
      let streams = owned.get(request);
      if (!streams) {
        owned.set(request, (streams = new Set()));
        const res = (serverContext as { res?: ServerResponse } | undefined)?.res;
        if (res?.closed) queueMicrotask(() => release(request));
        else res?.once('close', () => release(request));
      }
      streams.add(stream);
    },
    plugin: {
      onResultProcess({ result, setResult }) {
        if (!Array.isArray(result) || !result.some(isAsyncIterable)) return;
        setResult(
          result.map((item: unknown) => {
            if (!isAsyncIterable(item)) return item;
            void item.return?.();
            return { errors: [subscriptionInBatch()] };
          }) as typeof result,
        );
      },
    },
    edge: {
      onResponse(request, response) {
        if (!response.headers.get('content-type')?.startsWith(EVENT_STREAM)) release(request);
      },
    },
  };
}
