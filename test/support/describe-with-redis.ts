import { describe } from 'vitest';
import { REDIS_BINARY, redisSuitesSkipped, SKIP_REDIS_VARIABLE } from './redis-server';

/**
 * `describe` for a suite that needs `redis-server`. With SKIP_REDIS_TESTS=1 the suite is skipped
 * visibly: vitest counts its tests as skipped and prints the reason under the file's name.
 */
export function describeWithRedis(name: string, body: () => void): void {
  if (!redisSuitesSkipped()) {
    describe(name, body);
    return;
  }
  console.warn(`skipped "${name}": ${SKIP_REDIS_VARIABLE}=1 (the suite needs ${REDIS_BINARY})`);
  describe.skip(name, body);
}
