import type { RequestListener, ServerResponse } from 'node:http';
import { LinkedSet } from '../linked-set';

const SERVICE_UNAVAILABLE_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'retry-after': '5',
  connection: 'close',
};

/** The 503 each API gives when it cannot serve, in its own shape. */
function unavailableBody(url: string | undefined): string {
  return JSON.stringify(
    url?.startsWith('/api/')
      ? { message: 'Service Unavailable.' }
      : { errors: [{ message: 'Service Unavailable.', extensions: { code: 'SERVICE_UNAVAILABLE' } }] },
  );
}

/**
 * How long no request may be open before idle keep-alive sockets are closed during a drain. A
 * keep-alive client on a busy machine can take well over 100 ms to write its next request after
 * an answer; closing under it then is a reset (seen with 100 ms, tests running three at a time).
 */
const QUIET_MS = 1_000;

/**
 * Shutdown without dropping anything: once `start()` is called, every response (in flight or
 * new) says `Connection: close`, so keep-alive clients leave after their current request instead
 * of sending more; `expire()`, at the deadline, answers whatever is still open with 503 rather
 * than a reset (the app's late answer is then dropped by the adapter).
 */
export function createDrain() {
  let draining = false;
  // Not a Set: every response passes through it (src/linked-set.ts says what a Set cost).
  const open = new LinkedSet<ServerResponse>();
  let onQuiet: (() => void) | undefined;
  let quietTimer: NodeJS.Timeout | undefined;

  // Idle sockets are closed only once nothing has been open for QUIET_MS: closing them while
  // requests still flow reset clients whose next request was already on the wire.
  const checkQuiet = () => {
    clearTimeout(quietTimer);
    if (!draining || open.size > 0 || !onQuiet) return;
    quietTimer = setTimeout(() => onQuiet?.(), QUIET_MS);
    quietTimer.unref();
  };

  const closeAfter = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
  };

  return {
    get draining(): boolean {
      return draining;
    },
    wrap(listener: RequestListener): RequestListener {
      return (req, res) => {
        open.add(res);
        clearTimeout(quietTimer);
        res.once('close', () => {
          open.delete(res);
          checkQuiet();
        });
        if (draining) closeAfter(res);
        listener(req, res);
      };
    },
    /** `whenQuiet` runs (maybe repeatedly) whenever no request has been open for a moment. */
    start(whenQuiet?: () => void): void {
      draining = true;
      onQuiet = whenQuiet;
      for (const res of open) closeAfter(res);
      checkQuiet();
    },
    /** Answers every open request 503 (or cuts a response already under way); returns how many. */
    expire(): number {
      const count = open.size;
      for (const res of open) {
        if (res.headersSent) {
          res.destroy();
          continue;
        }
        res.writeHead(503, SERVICE_UNAVAILABLE_HEADERS);
        res.end(unavailableBody(res.req?.url));
      }
      return count;
    },
  };
}

export type Drain = ReturnType<typeof createDrain>;
