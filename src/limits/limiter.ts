import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { SharedRedis } from '../store/redis';

/** Where one client stands against one per-minute limit after a request was counted. */
export interface Allowance {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Until the window resets (and, when refused, until a retry can succeed). */
  resetMs: number;
}

export interface ClientLimiter {
  readonly limit: number;
  /** Counts `points` for the client; 'unavailable' only when the shared store is down and the limits fail closed. */
  consume(clientKey: string, points: number): Promise<Allowance | 'unavailable'>;
  /** The same count in this turn, where there is no shared store (the counts are this process's). */
  consumeNow?(clientKey: string, points: number): Allowance;
}

export interface LimiterOptions {
  /** Redis key prefix; one per kind of limit. */
  name: string;
  pointsPerMinute: number;
  /** The fleet's store; absent: counted per process. */
  redis?: SharedRedis;
  /**
   * With the store down or slow: count per process (the fleet then allows up to N × the limit)
   * instead of refusing. Either way the request never waits longer than the store's command timeout.
   */
  failOpen: boolean;
}

const WINDOW_SECONDS = 60;

/**
 * A fixed one-minute window per client (rate-limiter-flexible: one atomic INCR+PEXPIRE in Redis,
 * so every instance counts into the same window).
 */
export function createClientLimiter({
  name,
  pointsPerMinute,
  redis,
  failOpen,
}: LimiterOptions): ClientLimiter {
  if (!redis) {
    const consumeNow = createWindowCounter(pointsPerMinute, WINDOW_SECONDS * 1000);
    return {
      limit: pointsPerMinute,
      consumeNow,
      consume: (clientKey, points) => Promise.resolve(consumeNow(clientKey, points)),
    };
  }
  const local = new RateLimiterMemory({ keyPrefix: name, points: pointsPerMinute, duration: WINDOW_SECONDS });
  const limiter: RateLimiterAbstract = new RateLimiterRedis({
    storeClient: redis.client,
    useRedisPackage: false,
    // Straight to the insurance (or the error) while disconnected: no waiting on a dead store.
    rejectIfRedisNotReady: true,
    keyPrefix: `rl:${name}`,
    points: pointsPerMinute,
    duration: WINDOW_SECONDS,
    insuranceLimiter: failOpen ? local : undefined,
  });

  const allowance = (result: RateLimiterRes, allowed: boolean): Allowance => ({
    allowed,
    limit: pointsPerMinute,
    remaining: Math.max(0, result.remainingPoints),
    resetMs: Math.max(0, result.msBeforeNext),
  });

  return {
    limit: pointsPerMinute,
    async consume(clientKey, points) {
      // Skipped at once while Redis is down or not answering (the store's circuit is open):
      // rate-limiter-flexible alone would wait out each command's timeout first.
      const skipRedis = !redis.isReady();
      if (skipRedis && !failOpen) return 'unavailable';
      try {
        return allowance(await (skipRedis ? local : limiter).consume(clientKey, points), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return allowance(rejection, false);
        // Only reachable without insurance, i.e. failing closed.
        return 'unavailable';
      }
    },
  };
}

interface Window {
  used: number;
  endsAt: number;
}

/**
 * A fixed one-minute window per client, counted in this process and answered in the same turn: what
 * rate-limiter-flexible's RateLimiterMemory counts (points added, then refused past the limit), without
 * its promise a request (two a request, with the cost charge, when no shared store is configured).
 */
export function createWindowCounter(pointsPerMinute: number, windowMs: number) {
  const windows = new Map<string, Window>();
  return (clientKey: string, points: number): Allowance => {
    const now = Date.now();
    let window = windows.get(clientKey);
    if (window === undefined || window.endsAt <= now) {
      const fresh: Window = { used: 0, endsAt: now + windowMs };
      windows.set(clientKey, (window = fresh));
      // A client that does not come back is forgotten with its window (one timer a window, not a request).
      setTimeout(() => {
        if (windows.get(clientKey) === fresh) windows.delete(clientKey);
      }, windowMs).unref();
    }
    window.used += points;
    return {
      allowed: window.used <= pointsPerMinute,
      limit: pointsPerMinute,
      remaining: Math.max(0, pointsPerMinute - window.used),
      resetMs: Math.max(0, window.endsAt - now),
    };
  };
}
