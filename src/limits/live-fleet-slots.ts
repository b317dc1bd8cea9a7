import { randomUUID } from 'node:crypto';
import type { SharedRedis } from '../store/redis';

/**
 * Live subscriptions per customer across the fleet, as the rate limits are: one sorted set per
 * customer in Redis whose members are the open streams (`<instance>:<n>`), each scored with the
 * end of its lease. An instance renews its streams' leases while they are open and removes them
 * when they end; a lease it can no longer renew (the instance died) runs out and stops counting.
 * Without Redis, or while it does not answer, each instance counts its own (src/db/orders/live-orders.ts
 * keeps that bound in any case), so the fleet allows at most N × the limit.
 */

export interface FleetSlots {
  /** Takes one of the customer's slots: how to give it back, or 'full' when the fleet has none. */
  acquire(customerId: string): Promise<(() => void) | 'full'>;
  /** The bound per customer. */
  perCustomer: number;
}

export interface FleetSlotOptions {
  redis: SharedRedis;
  perCustomer: number;
  /** How long a lease lasts unrenewed (default 60 s); renewed every third of it. */
  leaseMs?: number;
}

const LEASE_MS = 60_000;

/** Redis's own clock, so instances' clocks do not matter. KEYS[1] the set; ARGV limit, lease, member. */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** KEYS[1] the set; ARGV lease, then the members to renew (those still there). */
const RENEW = `
local t = redis.call('TIME')
local until_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

const keyOf = (customerId: string) => `live:customer:${customerId}`;

export function createFleetSlots({ redis, perCustomer, leaseMs = LEASE_MS }: FleetSlotOptions): FleetSlots {
  const instance = randomUUID();
  let sequence = 0;
  /** The leases this instance holds, by customer key. */
  const held = new Map<string, Set<string>>();

  const renew = () => {
    if (!redis.isReady()) return;
    for (const [key, members] of held)
      redis.client.eval(RENEW, 1, key, leaseMs, ...members).catch(() => undefined);
  };
  // Unreferenced: it does work only while this instance holds leases, and Redis is closed at shutdown.
  setInterval(renew, Math.max(1_000, Math.floor(leaseMs / 3))).unref();

  const forget = (key: string, member: string) => {
    const members = held.get(key);
    members?.delete(member);
    if (members?.size === 0) held.delete(key);
  };

  return {
    async acquire(customerId) {
      if (!redis.isReady()) return () => undefined;
      const key = keyOf(customerId);
      const member = `${instance}:${(sequence += 1)}`;
      let taken: unknown;
      try {
        taken = await redis.client.eval(ACQUIRE, 1, key, perCustomer, leaseMs, member);
      } catch {
        // Redis did not answer in time: this instance's own bound is the one that holds.
        return () => undefined;
      }
      if (taken !== 1) return 'full';
      let members = held.get(key);
      if (!members) held.set(key, (members = new Set()));
      members.add(member);
      return () => {
        forget(key, member);
        redis.client.zrem(key, member).catch(() => undefined);
      };
    },
    perCustomer,
  };
}
