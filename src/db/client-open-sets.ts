import type { MongoClient } from 'mongodb';
import { LinkedSet } from '../linked-set';

/**
 * Where the driver (mongodb 7.9, `client.s`) keeps every open cursor and session of a client, to
 * close them with it: one add and one delete a query, each member a cursor with its documents or
 * the session that owns one. As `Set`s they kept every query's cursor alive through the
 * young-generation collections (src/linked-set.ts says why); the driver only adds, deletes,
 * clears and iterates them, which a LinkedSet does the same way.
 */
const OPEN_SETS = ['activeCursors', 'activeSessions'] as const;

/**
 * Gives a client that has not run anything yet LinkedSets for those two; a driver that keeps them
 * some other way is left as it is. Returns the names replaced (a test holds the driver to them).
 */
export function linkOpenSets(client: MongoClient): string[] {
  const state = (client as unknown as { s?: Record<string, unknown> }).s;
  const replaced: string[] = [];
  for (const name of OPEN_SETS) {
    const current = state?.[name];
    if (!(current instanceof Set) || current.size > 0) continue;
    state![name] = new LinkedSet<object>();
    replaced.push(name);
  }
  return replaced;
}
