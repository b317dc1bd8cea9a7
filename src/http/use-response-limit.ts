import type { Plugin } from 'graphql-yoga';
import { jsonResponse } from './fetch-api';

export interface ResponseLimitOptions {
  /** Largest GraphQL answer sent, in bytes; a batch's operations share it. */
  maxBytes: number;
}

const JSON_BODY = /^application\/(?:graphql-response\+)?json\b/i;

/**
 * A GraphQL answer (a batch's answers together) larger than `maxBytes` is not sent: the client
 * gets a 400 with `RESPONSE_TOO_LARGE`. The cost limit bounds one operation; ten cached ones in a
 * batch still made 8.8 MB from 17.5 kB, and a client that never reads held it all (150 such
 * sockets: RSS 0.94 → 2.1 GB). Nothing larger is held for a slow reader; what is held goes with
 * the socket at the server's idle timeout (src/server.ts). Sits before compression, which it
 * spares the work.
 */
export function useResponseLimit({ maxBytes }: ResponseLimitOptions): Plugin {
  const message = `The response would be larger than ${maxBytes} bytes: ask for fewer items or fields, or split the batch.`;
  const tooLarge = () =>
    jsonResponse(
      400,
      { errors: [{ message, extensions: { code: 'RESPONSE_TOO_LARGE' } }] },
      { 'cache-control': 'no-store' },
    );
  return {
    // A batch is measured result by result and refused as soon as it is over, before the whole
    // array is serialised (a refused 6.8 MB batch cost 200-600 ms of CPU; now what the limit holds).
    onResultProcess({ result, setResultProcessor }) {
      if (!Array.isArray(result)) return;
      let length = 2;
      for (const item of result) {
        length += JSON.stringify(item).length + 1;
        if (length > maxBytes) return setResultProcessor(tooLarge, 'application/json');
      }
    },
    // Exact, in bytes, for single results (and any batch measured short above: UTF-16 lengths).
    onResponse({ request, response, setResponse }) {
      const length = Number(response.headers.get('content-length') ?? 0);
      if (length <= maxBytes || !JSON_BODY.test(response.headers.get('content-type') ?? '')) return;
      if (new URL(request.url).pathname.replace(/\/$/, '') !== '/graphql') return;
      setResponse(tooLarge());
    },
  };
}
