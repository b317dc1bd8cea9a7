import { Redis, type Command } from 'ioredis';
import type { Logger } from '../logger';
import { createCircuitBreaker } from './circuit-breaker';

export interface SharedRedis {
  client: Redis;
  /**
   * True while the connection is up and answering; callers skip the store (fail open) when it is
   * not. After repeated command timeouts (a Redis that hangs) it is false for a cool-down.
   */
  isReady(): boolean;
  /** How many times repeated timeouts made the process skip Redis (the circuit opened). */
  circuitTrips(): number;
  /**
   * True when Redis answers a PING within the command timeout (a connected but stopped one does
   * not) and the process is not skipping it.
   */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface RedisOptions {
  /** `redis://` or `rediss://` URL. */
  url: string;
  logger: Logger;
  /** How long one command may take before it fails (and the caller goes without). Default 150 ms. */
  commandTimeoutMs?: number;
  /** Command timeouts in a row after which Redis is skipped for `coolDownMs`. Default 3. */
  timeoutsToSkip?: number;
  /** How long Redis is skipped before a PING asks whether it answers again. Default 2 s. */
  coolDownMs?: number;
}

const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * The fleet's shared store. A request must never wait on a dead or slow Redis: commands are not
 * queued while disconnected (they fail at once), each has a short timeout and one retry at most,
 * and the client reconnects forever in the background with a capped backoff.
 */
export function connectRedis({
  url,
  logger,
  commandTimeoutMs = 150,
  timeoutsToSkip = 3,
  coolDownMs = 2_000,
}: RedisOptions): SharedRedis {
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

  const ping = async () =>
    client.status === 'ready' &&
    (await client.ping().then(
      (answer) => answer === 'PONG',
      () => false,
    ));
  // A stopped Redis keeps its connection 'ready' while every command waits out its timeout: under
  // SIGSTOP every request took 150 ms more (p50 4 → 308 ms). After a few timeouts in a row the
  // process skips it until a PING answers again.
  const breaker = createCircuitBreaker({
    failuresToOpen: timeoutsToSkip,
    coolDownMs,
    probe: ping,
    onOpen: (timeouts) =>
      logger.warn(
        { timeouts, coolDownMs },
        'shared store (Redis) does not answer: skipping it until a PING does',
      ),
    onClose: () => logger.info('shared store (Redis) answers again'),
  });
  const sendCommand = client.sendCommand.bind(client);
  client.sendCommand = (command: Command, stream?: Parameters<typeof sendCommand>[1]) => {
    // Redis answers a timed-out command later, in order; ioredis still hands that answer on.
    let answered = false;
    const resolve = command.resolve;
    command.resolve = (result: unknown) => {
      answered = true;
      resolve(result);
    };
    command.promise.then(
      () => breaker.success(),
      (error: unknown) => {
        if (!(error instanceof Error) || error.message !== 'Command timed out') return;
        // Judged after the loop's next poll for I/O: when this process's own loop was held (a burst
        // of pipelined requests held it 0.4 s), the timer fires before the answer waiting unread in
        // the socket is read, and that says nothing about Redis.
        setImmediate(() => {
          if (!answered) breaker.failure();
        });
      },
    );
    return sendCommand(command, stream);
  };

  let closing: Promise<void> | undefined;
  return {
    client,
    isReady: () => client.status === 'ready' && !breaker.isOpen(),
    circuitTrips: () => breaker.trips,
    // Skipped Redis is reported degraded (it is, for this process) without another wait.
    ping: async () => !breaker.isOpen() && (await ping()),
    close: () =>
      (closing ??= (async () => {
        breaker.stop();
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
