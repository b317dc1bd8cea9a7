import type { Db } from 'mongodb';
import { main } from '../src/main';

/**
 * `npm start`: the server, with the sample fixtures on hand for an empty database. The fixtures
 * module is imported only when the server asks for it (SEED_FIXTURES, default on outside
 * production), so a production process never loads sample data.
 */
await main({
  seedIfEmpty: async (db: Db) => (await import('../seed/load')).seedFixturesIfEmpty(db),
});
