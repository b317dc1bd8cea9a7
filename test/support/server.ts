import { SignJWT } from 'jose';
import { loadConfig } from '../../src/config';
import { createLogger, type Logger } from '../../src/logger';
import { startServer, type RunningServer } from '../../src/server';
import { loadFixtures } from '../../seed/load';
import { openTestDatabase, type TestDatabase } from './database';

export const TEST_JWT_SECRET = 'test-secret-that-is-at-least-32-characters-long';

export interface TestServer extends RunningServer {
  testDb: TestDatabase;
  /** GET (or another method) against the server, over real HTTP. */
  request(path: string, init?: RequestInit): Promise<Response>;
  graphql(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLReply>;
  stop(): Promise<void>;
}

export interface GraphQLReply {
  status: number;
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: Record<string, unknown>; path?: unknown[] }[];
  };
}

/**
 * A server that polls `updated_at` instead of reading the engine's log: the last resort, for a
 * DocumentDB whose PostgreSQL the gateway may not read (its own suites keep it tested).
 */
export const POLLING_FEED = { CHANGE_FEED_POSTGRES_URL: '' } as const;

/** The real server on a free port, over a fresh database (with the fixtures unless told otherwise). */
export async function startTestServer(
  options: {
    fixtures?: boolean;
    env?: Record<string, string>;
    logger?: Logger;
    /** Another server's database: a second instance of the same deployment (left open by stop). */
    database?: TestDatabase;
  } = {},
): Promise<TestServer> {
  const testDb = options.database ?? (await openTestDatabase('server'));
  if (!options.database && (options.fixtures ?? true)) await loadFixtures(testDb.db);
  const config = loadConfig({
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    MONGODB_URI: testDb.uri,
    MONGODB_DB: testDb.dbName,
    CHANGE_FEED_POSTGRES_URL: testDb.postgresUrl,
    // One cluster serves every file at once: its log holds all of their writes, which each server's
    // slot decodes, so under the suite's load the feed can take more than the default second.
    CHANGE_FEED_WAIT_MS: '2000',
    JWT_SECRET: TEST_JWT_SECRET,
    SEED_FIXTURES: 'false',
    LOG_LEVEL: 'silent',
    // Tests change data under a running server; the cache has its own tests.
    RESPONSE_CACHE_TTL_MS: '0',
    // Round-trip tests count the driver's command events.
    MONGODB_MONITOR_COMMANDS: 'true',
    ...options.env,
  });
  const server = await startServer({ config, logger: options.logger ?? createLogger(config.logLevel) });
  return {
    ...server,
    testDb,
    request: (path, init) => fetch(`${server.url}${path}`, init),
    async graphql(query, variables, headers = {}) {
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, body: (await response.json()) as GraphQLReply['body'] };
    },
    async stop() {
      await server.close(2_000);
      if (!options.database) await testDb.close();
    },
  };
}

export interface TokenOptions {
  sub?: string;
  scope?: string | string[];
  secret?: string;
  expiresAt?: number;
  notBefore?: number;
  issuer?: string;
  audience?: string;
}

/** A signed HS256 token; options allow every kind of wrong token the tests need. */
export async function mintToken(options: TokenOptions = {}): Promise<string> {
  let jwt = new SignJWT(options.scope === undefined ? {} : { scope: options.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(options.expiresAt ?? '1h');
  if (options.sub !== undefined) jwt = jwt.setSubject(options.sub);
  if (options.notBefore !== undefined) jwt = jwt.setNotBefore(options.notBefore);
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET));
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
