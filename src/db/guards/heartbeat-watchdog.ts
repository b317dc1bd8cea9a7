import type { MongoClient } from 'mongodb';

export interface HeartbeatWatchdogOptions {
  /** A heartbeat that has neither succeeded nor failed after this long is stuck. */
  stuckAfterMs: number;
  /**
   * The driver's heartbeatFrequencyMS (default 10 s): an awaited heartbeat (the streaming
   * protocol of MongoDB ≥ 4.4) may wait this long for the server's reply by design.
   */
  heartbeatFrequencyMs?: number;
  /** How long to wait before connecting again after a failed attempt. */
  retryMs?: number;
  log?: (message: string, details: Record<string, unknown>) => void;
}

/**
 * The driver (mongodb 7.9) can leave its server monitor waiting forever: a heartbeat that starts
 * on a connection whose socket has just been destroyed waits for a 'drain' that never comes. The
 * server then stays Unknown and every operation fails server selection for good, while a new
 * client connects at once (seen after a kill -9 of the embedded PostgreSQL, about one run in two:
 * the monitor "monitoring" on a closed, destroyed connection, no socket left). No public call
 * restarts a monitor; closing the client and connecting it again does, and every Db and
 * Collection made from it keeps working. Operations running at that moment fail (a 503).
 *
 * Returns the function that stops watching (call it before closing the client for good).
 */
export function watchHeartbeats(
  client: MongoClient,
  {
    stuckAfterMs,
    heartbeatFrequencyMs = 10_000,
    retryMs = 1_000,
    log = () => undefined,
  }: HeartbeatWatchdogOptions,
): () => void {
  const pending = new Map<string, NodeJS.Timeout>();
  let recovering = false;
  let stopped = false;

  const finished = ({ connectionId }: { connectionId: string }) => {
    clearTimeout(pending.get(connectionId));
    pending.delete(connectionId);
  };
  const started = (event: { connectionId: string; awaited: boolean }) => {
    finished(event);
    const limitMs = stuckAfterMs + (event.awaited ? heartbeatFrequencyMs : 0);
    pending.set(event.connectionId, setTimeout(() => void reconnect(event.connectionId), limitMs).unref());
  };

  async function reconnect(address: string): Promise<void> {
    pending.delete(address);
    if (recovering || stopped) return;
    recovering = true;
    log('database monitor stuck; connecting the client again', { address, stuckAfterMs });
    try {
      await client.close();
      while (!stopped) {
        try {
          await client.connect();
          // Stopped meanwhile: the owner's close() ran before this connect() ended.
          if (stopped) await client.close();
          else log('database client connected again', { address });
          return;
        } catch (error) {
          log('database client could not connect again; retrying', {
            address,
            error: (error as Error).message,
          });
          await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
        }
      }
    } finally {
      recovering = false;
    }
  }

  client.on('serverHeartbeatStarted', started);
  client.on('serverHeartbeatSucceeded', finished);
  client.on('serverHeartbeatFailed', finished);
  return () => {
    stopped = true;
    client.off('serverHeartbeatStarted', started);
    client.off('serverHeartbeatSucceeded', finished);
    client.off('serverHeartbeatFailed', finished);
    for (const timer of pending.values()) clearTimeout(timer);
    pending.clear();
  };
}
