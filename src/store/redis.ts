import { Redis } from 'ioredis';
import type { Logger } from '../logger';

export interface SharedRedis {
  client: Redis;
  /** True while the connection is up; callers skip the store (fail open) when it is not. */
  isReady(): boolean;
  /** True when Redis answers a PING within the command timeout (a connected but stopped one does not). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface RedisOptions {
  /** `redis://` or `rediss://` URL. */
  url: string;
  logger: Logger;
  /** How long one command may take before it fails (and the caller goes without). Default 150 ms. */
  commandTimeoutMs?: number;
}

const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * The fleet's shared store. A request must never wait on a dead or slow Redis: commands are not
 * queued while disconnected (they fail at once), each has a short timeout and one retry at most,
 * and the client reconnects forever in the background with a capped backoff.
 */
export function connectRedis({ url, logger, commandTimeoutMs = 150 }: RedisOptions): SharedRedis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: commandTimeoutMs,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), MAX_RECONNECT_DELAY_MS),
    // Reconnects after READONLY (a failed-over primary) instead of failing every write.
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    lazyConnect: false,
  });

  // One log line per state change, not one per failed reconnect attempt.
  let state: 'connecting' | 'ready' | 'down' = 'connecting';
  client.on('ready', () => {
    if (state !== 'ready') logger.info({ redis: redactUrl(url) }, 'shared store (Redis) connected');
    state = 'ready';
  });
  client.on('error', (error: Error) => {
    if (state === 'down') return;
    state = 'down';
    logger.warn({ err: { message: error.message } }, 'shared store (Redis) unavailable; going without it');
  });
  client.on('end', () => {
    state = 'down';
  });

  let closing: Promise<void> | undefined;
  return {
    client,
    isReady: () => client.status === 'ready',
    ping: async () =>
      client.status === 'ready' &&
      (await client.ping().then(
        (answer) => answer === 'PONG',
        () => false,
      )),
    close: () =>
      (closing ??= (async () => {
        try {
          if (client.status === 'ready') await client.quit();
          else client.disconnect();
        } catch {
          client.disconnect();
        }
      })()),
  };
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis';
  }
}
