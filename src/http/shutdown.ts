import net, { type Server } from 'node:net';
import type { LiveOrders } from '../db/orders/live-orders';
import { shuttingDown } from '../errors';
import type { Logger } from '../logger';
import type { Drain } from './drain';

/** What a live subscription ended by shutdown is told: subscribe again after this many seconds. */
const RESUBSCRIBE_AFTER_S = 5;

export interface ShutdownParts {
  server: Server & { closeIdleConnections(): void; closeAllConnections(): void };
  drain: Drain;
  liveOrders: LiveOrders;
  logger: Logger;
  defaultDeadlineMs: number;
  /** Closes what the server used (feeds, database, shared store), once no request is open. */
  release: () => Promise<void>;
}

/**
 * /readyz turns 503 and every response says `Connection: close`; the listener closes; in-flight
 * requests finish and their sockets close after the answer; idle keep-alive sockets close once
 * no request has been open for a moment (node:http's close() destroyed them at once, and a
 * client whose next request was already on the wire got a reset); then the rest is released. At
 * the deadline what is still open is answered 503, and a second later cut. Called twice, it
 * returns the first call's promise.
 */
export function shutdownInOrder(parts: ShutdownParts): (deadlineMs?: number) => Promise<void> {
  const { server, drain, liveOrders, logger, defaultDeadlineMs, release } = parts;
  let closing: Promise<void> | undefined;
  return (deadlineMs = defaultDeadlineMs) =>
    (closing ??= (async () => {
      drain.start(() => server.closeIdleConnections());
      // Each live subscription gets a last event that says when to subscribe again, and completes.
      const streams = liveOrders.endAll(shuttingDown(RESUBSCRIBE_AFTER_S));
      if (streams > 0) logger.info({ streams }, 'shutdown: ended the live subscriptions');
      const drained = new Promise<void>((resolve) =>
        net.Server.prototype.close.call(server, () => resolve()),
      );
      let cutTimer: NodeJS.Timeout | undefined;
      const deadline = setTimeout(() => {
        const expired = drain.expire();
        if (expired > 0) logger.warn({ requests: expired }, 'shutdown deadline: answered 503');
        server.closeIdleConnections();
        cutTimer = setTimeout(() => server.closeAllConnections(), 1_000);
      }, deadlineMs);
      await drained;
      clearTimeout(deadline);
      clearTimeout(cutTimer);
      liveOrders.close();
      await release();
    })());
}
