import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/**
 * What the Redis-backed suites need of the machine: the `redis-server` binary (Debian's package of
 * the same name), found on PATH, or the explicit choice to skip them. `npm test` makes sure of it
 * first (scripts/ensure-redis.ts); test/support/redis.ts starts private servers from it.
 */

export const REDIS_BINARY = 'redis-server';
export const REDIS_PACKAGE = 'redis-server';
export const SKIP_REDIS_VARIABLE = 'SKIP_REDIS_TESTS';

/** The first executable `name` on PATH, as a shell would find it. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export function findRedisServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findOnPath(REDIS_BINARY, env);
}

export function redisSuitesSkipped(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SKIP_REDIS_VARIABLE] === '1';
}

/** The one line for a machine without redis-server: what to install, or how to skip explicitly. */
export function redisMissingMessage(why?: string): string {
  return `${REDIS_BINARY} not found on PATH${why ? ` and ${why}` : ''}: install it (Debian/Ubuntu: sudo apt-get install ${REDIS_PACKAGE}; any Redis ≥ 6 on PATH will do) or set ${SKIP_REDIS_VARIABLE}=1 to skip the Redis-backed suites.`;
}
