import type { AsyncMethods } from './instrumented';

/** What every repository read sends the server: maxTimeMS stops the query there, too. */
export interface ReadLimits {
  maxTimeMS?: number;
}

/** A repository call that outlived MONGODB_TIMEOUT_MS: the database is treated as unavailable. */
export class DatabaseTimeoutError extends Error {
  constructor(query: string, timeoutMs: number) {
    super(`${query} did not complete within ${timeoutMs} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/**
 * Bounds each repository call end to end. The mongodb 7 driver has no working overall operation
 * timeout (`timeoutMS` is deprecated and ignored): on a hung (SIGSTOPped) server an operation
 * waited for the monitor to give up, 10–15 s, and retried. The driver's own socket timeout frees
 * the connection soon after (src/db/mongo.ts); this answers the request on time.
 */
export function withDeadline<T extends AsyncMethods>(name: string, repository: T, timeoutMs: number): T {
  const wrapped: Record<string, unknown> = {};
  for (const [method, call] of Object.entries(repository)) {
    const query = `${name}.${method}`;
    wrapped[method] = (...args: never[]) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DatabaseTimeoutError(query, timeoutMs)), timeoutMs);
      });
      const operation = call(...args);
      // A late failure of the abandoned operation is not anyone's business any more.
      operation.catch(() => undefined);
      return Promise.race([operation, deadline]).finally(() => clearTimeout(timer));
    };
  }
  return wrapped as T;
}
