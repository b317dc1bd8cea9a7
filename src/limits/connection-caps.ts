import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import proxyaddr from 'proxy-addr';
import { addressKey } from './client-key';

export type ConnectionRefusal = 'connections-per-server' | 'connections-per-address';

export interface ConnectionCapOptions {
  /** Open connections the server keeps; past it new ones are dropped. 0: no cap. */
  perServer: number;
  /** Open connections one client address keeps (an IPv6 /64 is one); 0: no cap. */
  perAddress: number;
  /** Load balancers and proxies: many clients behind one address, so not capped per address. */
  trustedProxies: string[];
  /** Told of refusals at most once per LOG_INTERVAL_MS, with how many since the last time. */
  onRefused: (reason: ConnectionRefusal, refused: number) => void;
}

const LOG_INTERVAL_MS = 10_000;

/**
 * Caps the connections one server holds and one address holds, before any byte is read: 19,990
 * idle sockets from one address reached the process's 20,000 descriptors and every other client
 * got socket errors. Refused sockets are closed at once (node:http's own `maxConnections` for the
 * server cap). Returns the running totals for the metrics.
 */
export function capConnections(
  server: Server,
  { perServer, perAddress, trustedProxies, onRefused }: ConnectionCapOptions,
): { refused(): Readonly<Record<ConnectionRefusal, number>> } {
  const totals: Record<ConnectionRefusal, number> = {
    'connections-per-server': 0,
    'connections-per-address': 0,
  };
  const unreported: Record<ConnectionRefusal, number> = {
    'connections-per-server': 0,
    'connections-per-address': 0,
  };
  let reportTimer: NodeJS.Timeout | undefined;
  const report = () => {
    reportTimer = undefined;
    for (const reason of Object.keys(unreported) as ConnectionRefusal[]) {
      if (unreported[reason] > 0) onRefused(reason, unreported[reason]);
      unreported[reason] = 0;
    }
  };
  const refuse = (reason: ConnectionRefusal) => {
    totals[reason] += 1;
    unreported[reason] += 1;
    if (reportTimer) return;
    report();
    reportTimer = setTimeout(report, LOG_INTERVAL_MS);
    reportTimer.unref();
  };

  if (perServer > 0) {
    server.maxConnections = perServer;
    server.on('drop', () => refuse('connections-per-server'));
    closeAfterAnswersNearCap(server, perServer);
  }
  if (perAddress > 0) {
    const trusted = proxyaddr.compile(trustedProxies);
    const open = new Map<string, number>();
    // Before node:http's own listener: a refused socket never gets a parser.
    server.prependListener('connection', (socket: Socket) => {
      const address = socket.remoteAddress;
      if (!address || trusted(address, 0)) return;
      const key = addressKey(address);
      const count = (open.get(key) ?? 0) + 1;
      if (count > perAddress) {
        refuse('connections-per-address');
        socket.destroy();
        return;
      }
      open.set(key, count);
      socket.once('close', () => {
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      });
    });
  }
  return { refused: () => ({ ...totals }) };
}

/** Past this share of the server's cap, every answer closes its connection. */
const KEEP_ALIVE_SHARE = 0.9;

/**
 * Near the cap, no connection stays open idle after its answer (`Connection: close`): clients
 * that keep connections they no longer use (a subscription refused, its stream answered with the
 * error and ended) would otherwise fill the cap and lock every other client out (issue 36, row 4:
 * 10,200 stream requests from 51 addresses, each within its per-address cap).
 */
function closeAfterAnswersNearCap(server: Server, perServer: number): void {
  let open = 0;
  const threshold = Math.floor(perServer * KEEP_ALIVE_SHARE);
  server.prependListener('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
  });
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    // Far from the cap (the usual case) an answer costs nothing more.
    if (open < threshold / 2) return;
    if (open >= threshold) response.shouldKeepAlive = false;
    // An answer that names its own `Connection: keep-alive` (an event stream's) overrides that:
    // its connection is ended once it is done instead.
    response.once('finish', () => {
      if (open >= threshold) request.socket.end();
    });
  });
}
