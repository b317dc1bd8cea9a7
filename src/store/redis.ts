import { Redis } from 'ioredis';
import type { Logger } from '../logger';

export interface SharedRedisOptions {
  url: string;
  logger: Logger;
  /** Longest a command may take before it counts as failed. Default 200 ms. */
  commandTimeoutMs?: number;
}

/** The fleet's shared store. Every user of it must treat a failed command as "no shared state". */
export interface SharedRedis {
  client: Redis;
  /** Connected right now: /readyz reports "degraded" otherwise. */
  isReady(): boolean;
  close(): Promise<void>;
}

/**
 * A Redis client that never makes a request wait on a dead or slow Redis: no offline queue (a
 * command while disconnected fails at once), a short command timeout, one retry per command, and
 * reconnection forever with a capped backoff. Connection errors are logged once per outage.
 */
export function connectRedis({ url, logger, commandTimeoutMs = 200 }: SharedRedisOptions): SharedRedis {
  let down = false;
  const client = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(1_000, commandTimeoutMs * 5),
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    lazyConnect: false,
  });
  client.on('ready', () => {
    if (down) logger.info('shared store (Redis) is back');
    down = false;
  });
  client.on('error', (error: Error) => {
    if (!down)
      logger.warn(
        { err: { message: error.message } },
        'shared store (Redis) unavailable: working per process',
      );
    down = true;
  });
  return {
    client,
    isReady: () => client.status === 'ready',
    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
}
