import type { ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { jsonResponse } from './fetch-api';
import type { Edge } from './router';

export interface ResponseLimitOptions {
  /** Largest GraphQL answer sent, in bytes; a batch's operations share it. */
  maxBytes: number;
  /** Bytes of JSON answers (both APIs) the process holds at once, from serialised until written out. */
  maxBytesInFlight: number;
  /** Told of each answer refused for want of the in-flight budget. */
  onOverBudget?: () => void;
}

/** A batch item whose JSON length is known without serialising it (a stored result). */
export interface SizedResult {
  readonly jsonLength: number;
}

const JSON_BODY = /^application\/(?:graphql-response\+)?json\b/i;

function jsonLengthOf(item: unknown): number {
  const known = (item as Partial<SizedResult> | null)?.jsonLength;
  return typeof known === 'number' ? known : JSON.stringify(item).length;
}

function overBudget(pathname: string) {
  const body = pathname.startsWith('/api/')
    ? { message: 'Service Unavailable.' }
    : { errors: [{ message: 'Service Unavailable.', extensions: { code: 'SERVICE_UNAVAILABLE' } }] };
  return jsonResponse(503, body, { 'cache-control': 'no-store', 'retry-after': '1' });
}

/**
 * Two bounds on answers:
 * - one GraphQL answer (a batch's answers together) larger than `maxBytes` is not sent: a 400
 *   with `RESPONSE_TOO_LARGE`. Ten cached operations in a batch made 8.8 MB from 17.5 kB;
 * - the JSON answers built per request (both APIs) and not yet taken by their sockets (so
 *   compression included) hold at most `maxBytesInFlight` together: one that does not fit is
 *   dropped and answered 503 with `Retry-After`. A cached 1 MB batch asked by 300 clients at once
 *   took RSS from 161 MB to 2.7 GB. A batch is weighed before it is serialised, so a refused one
 *   costs next to nothing. Pages every client shares (GraphiQL, the docs) are not counted.
 * Sits before compression, which it spares the work. In-process (yoga.fetch, no socket) only the
 * first bound applies.
 */
export function useResponseLimit({ maxBytes, maxBytesInFlight, onOverBudget }: ResponseLimitOptions): {
  plugin: Plugin;
  edge: Edge;
} {
  const message = `The response would be larger than ${maxBytes} bytes: ask for fewer items or fields, or split the batch.`;
  const tooLarge = () =>
    jsonResponse(
      400,
      { errors: [{ message, extensions: { code: 'RESPONSE_TOO_LARGE' } }] },
      { 'cache-control': 'no-store' },
    );
  let inFlight = 0;
  const charged = new WeakSet<Request>();
  /** Counts `bytes` until the socket is done with them; false when they do not fit. */
  const take = (request: Request, serverContext: unknown, bytes: number): boolean => {
    const res = (serverContext as { res?: ServerResponse } | undefined)?.res;
    if (!res || res.closed || charged.has(request)) return true;
    if (inFlight + bytes > maxBytesInFlight) {
      onOverBudget?.();
      return false;
    }
    inFlight += bytes;
    charged.add(request);
    res.once('close', () => (inFlight -= bytes));
    return true;
  };

  const plugin: Plugin = {
    // A batch is measured result by result and refused as soon as it is over, before the whole
    // array is serialised (a refused 6.8 MB batch cost 200-600 ms of CPU; now what the limit holds).
    onResultProcess({ request, result, serverContext, setResultProcessor }) {
      if (!Array.isArray(result)) return;
      let length = 2;
      for (const item of result) {
        length += jsonLengthOf(item) + 1;
        if (length > maxBytes) return setResultProcessor(tooLarge, 'application/json');
      }
      if (!take(request, serverContext, length)) {
        setResultProcessor(() => overBudget(pathnameOf(request)), 'application/json');
      }
    },
  };
  const edge: Edge = {
    onResponse(request, response, serverContext) {
      if (!JSON_BODY.test(response.headers.get('content-type') ?? '')) return;
      // Exact, in bytes, for single results (and any batch measured short above: UTF-16 lengths).
      const length = Number(response.headers.get('content-length') ?? 0);
      // The path is parsed only for an answer that is refused, not for every answer.
      if (length > maxBytes && pathnameOf(request).replace(/\/$/, '') === '/graphql') return tooLarge();
      if (length > 0 && !take(request, serverContext, length)) return overBudget(pathnameOf(request));
    },
  };
  return { plugin, edge };
}

const pathnameOf = (request: Request) => new URL(request.url).pathname;
