import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config';
import { capConnections } from '../limits/connection-caps';
import type { Logger } from '../logger';
import type { Drain } from './drain';
import { answerClientErrors, guardRequests, NODE_SERVER_OPTIONS } from './node-guards';
import { oneRequestPerConnection } from './one-request-per-connection';

/** The least time a socket may be idle (no byte read or written) before it is closed. */
const SOCKET_IDLE_TIMEOUT_MS = 15_000;
/**
 * An event stream (a live subscription) is silent between Yoga's pings, every 12 s: its socket
 * may be idle for two of them. One whose reader stops reading still goes at this timeout.
 */
const EVENT_STREAM_IDLE_TIMEOUT_MS = 30_000;
/** Requests a connection may pipeline behind the one being answered (src/http/one-request-per-connection.ts). */
const PIPELINED_WAITING = 16;

/** The idle timeout of a request that asks for an event stream, not the server's. */
function eventStreamsIdleLonger(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.accept?.includes('text/event-stream'))
      req.socket.setTimeout(EVENT_STREAM_IDLE_TIMEOUT_MS);
    listener(req, res);
  };
}

export interface NodeServer {
  server: Server;
  /** Connections refused or closed by a bound, by reason (for /metrics). */
  refused(): Record<string, number>;
}

/** The node:http server around the app, with every bound of the HTTP edge: one request at a time per connection, caps, timeouts. */
export function createNodeServer(
  app: RequestListener,
  { config, logger, drain }: { config: Config; logger: Logger; drain: Drain },
): NodeServer {
  let pipelineOverflows = 0;
  const server = createServer(
    { keepAliveTimeout: 5_000, requestTimeout: 30_000, headersTimeout: 10_000, ...NODE_SERVER_OPTIONS },
    drain.wrap(
      eventStreamsIdleLonger(
        oneRequestPerConnection(guardRequests(app, { maxBodyBytes: config.maxBodyBytes }), {
          maxWaiting: PIPELINED_WAITING,
          onOverflow: () => (pipelineOverflows += 1),
        }),
      ),
    ),
  );
  answerClientErrors(server, (code) => logger.info({ code }, 'client error'));
  const caps = capConnections(server, {
    ...config.connectionCaps,
    trustedProxies: config.rateLimit.trustedProxies,
    onRefused: (reason, connections) =>
      logger.warn(
        { reason, connections },
        'connections refused: a connection cap (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS) is reached',
      ),
  });
  // A socket with nothing read or written for this long is closed, with whatever it held: a
  // client that never reads its answer stalls the writes (150 such held 1.6 GB, never let go).
  // It must outlast a request's silent database work (several reads of MONGODB_TIMEOUT_MS each).
  server.setTimeout(Math.max(SOCKET_IDLE_TIMEOUT_MS, 3 * config.mongo.timeoutMs));
  return { server, refused: () => ({ ...caps.refused(), 'pipelined-requests': pipelineOverflows }) };
}

/** Listens, and resolves with the server's URL (IPv6 in brackets). */
export function listen(server: Server, host: string, port: number): Promise<{ url: string; port: number }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({ url: `http://${shown}:${address.port}`, port: address.port });
    });
  });
}
