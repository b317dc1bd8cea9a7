import path from 'node:path';
import proxyaddr from 'proxy-addr';
import {
  envSchema,
  JWT_ALGORITHMS,
  LOG_FORMATS,
  LOG_LEVELS,
  PRODUCTION_CONNECTION_CAPS,
  PRODUCTION_RATE_LIMITS,
  type EnvValues,
  type JwtAlgorithm,
} from './config-env';

/** The only reader of process.env. Everything else receives a validated, frozen Config. */

export interface JwtConfig {
  /** Shared HS* secret; when absent in development, one is generated into DATA_DIR. */
  secret?: string;
  jwksUrl?: string;
  algorithms: JwtAlgorithm[];
  issuer?: string;
  audience?: string;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  mongo: {
    uri?: string;
    dbName: string;
    maxPoolSize: number;
    /** How long an operation waits for a reachable server before the APIs answer 503. */
    timeoutMs: number;
    /**
     * Admission control, per lane (cheap lookups by key; everything else; searches of 1–2-character
     * words only, `wordScans` at once, each slot busy at most `wordScanShare` of the time): queries
     * running at once, and queries waiting for a turn. Past both the APIs answer 503 at once.
     */
    admission: { concurrency: number; queue: number; wordScans: number; wordScanShare: number };
    /** The driver's command events, for debugging and round-trip tests; costly. */
    monitorCommands: boolean;
    readPreference: 'primary' | 'primaryPreferred' | 'secondary' | 'secondaryPreferred' | 'nearest';
  };
  /** The fleet's shared store (cache, limits, persisted documents); unset: all per process. */
  redisUrl?: string;
  dataDir: string;
  publicBaseUrl?: string;
  jwt: JwtConfig;
  storeLocale: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Default: pretty outside production when stdout is a terminal; JSON otherwise (pipes, shippers). */
  logFormat: (typeof LOG_FORMATS)[number];
  seedFixturesWhenEmpty: boolean;
  /** Origins allowed by CORS; empty means CORS is off. */
  corsOrigins: string[];
  /** GraphQL introspection and GraphiQL; default on outside production. */
  introspection: boolean;
  maxBodyBytes: number;
  /** Largest GraphQL answer (a batch's together) sent; past it a 400 RESPONSE_TOO_LARGE. */
  maxResponseBytes: number;
  /** Bytes of JSON answers built and not yet written out, per process; past it a 503. */
  maxResponseBytesInFlight: number;
  /** Prometheus metrics and /metrics; off: neither is collected nor served. */
  metrics: boolean;
  /** One log line per request at info. */
  requestLog: boolean;
  /**
   * Bearer token /metrics requires when set. Unset: /metrics is open in development and test,
   * and off (404) in production.
   */
  metricsToken?: string;
  shutdownDeadlineMs: number;
  /** Lifetime of cached anonymous product results; 0 turns the cache off. */
  responseCacheTtlMs: number;
  /** How the data layer follows writes where the database has no change streams (src/db/change-feed.ts). */
  changeFeed: {
    /** PostgreSQL under DocumentDB, with replication rights: the feed reads its log (src/db/feed/log.ts). */
    postgresUrl?: string;
    /** How long a request waits for the log's feed to hand on what committed before it. */
    waitMs: number;
    /** How long a database's lasting log slot may go unserved before any instance drops it. */
    slotAbandonMs: number;
    intervalMs: number;
    batchSize: number;
    reconcileMs: number;
    lookBackMs: number;
  };
  /** Bytes (of JSON) each response cache, GraphQL results and /api/v1 pages, may hold. */
  responseCacheBudget: { maxBytes: number; maxEntryBytes: number };
  /** `Cache-Control` of public product reads, for browsers and CDNs. */
  httpCache: { maxAgeSeconds: number; staleWhileRevalidateSeconds: number };
  /** Smallest body compressed (br or gzip); 0 turns compression off (e.g. a proxy compresses). */
  compressionMinBytes: number;
  /**
   * OpenTelemetry tracing: on when an OTLP endpoint is set (and OTEL_SDK_DISABLED is not true).
   * Off, the SDK is never loaded.
   */
  tracing: boolean;
  rateLimit: RateLimitConfig;
  /** Open connections per process and per client address (trusted proxies exempt); 0 = no cap. */
  connectionCaps: { perServer: number; perAddress: number };
  persistedOperations: PersistedOperationsConfig;
  /** Live order subscriptions open at once (src/db/orders/live-orders.ts); 0 per instance: none. */
  /** Live order subscriptions (src/db/orders/live-orders.ts): bounds, lifetime, the slowest reader kept. */
  liveOrders: {
    perCustomer: number;
    perInstance: number;
    /** Per client address (as the rate limits see it); 0: no bound. */
    perAddress: number;
    maxLifetimeMs: number;
    maxLagMs: number;
  };
}

export interface RateLimitConfig {
  /** Requests per client per minute, both APIs together; 0 = off. */
  requestsPerMinute: number;
  /** Estimated GraphQL cost per client per minute; 0 = off. */
  costPerMinute: number;
  /** With the shared store down: count per process (true) or answer 503 (false). */
  failOpen: boolean;
  /** Addresses/CIDRs (or proxy-addr's names) whose X-Forwarded-For is believed. */
  trustedProxies: string[];
}

export interface PersistedOperationsConfig {
  mode: 'off' | 'apq' | 'trusted-only';
  /** Absolute path of the JSON manifest (sha256 hash → document) of `npm run persist`. */
  manifestPath?: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      problems.length === 1
        ? `Invalid configuration: ${problems[0]}`
        : `Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

function parseAlgorithms(
  raw: string | undefined,
  hasSecret: boolean,
  hasJwks: boolean,
): JwtAlgorithm[] | string {
  if (raw === undefined) {
    if (hasJwks && !hasSecret) return ['RS256', 'ES256', 'PS256', 'EdDSA'];
    return ['HS256'];
  }
  const names = raw.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(JWT_ALGORITHMS as readonly string[]).includes(name));
  if (unknown.length > 0) return `JWT_ALGORITHMS: unknown algorithm ${unknown.join(', ')}`;
  return names as JwtAlgorithm[];
}

/** A comma-separated setting's entries. */
const listOf = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

/** Settings that must agree with each other, or with NODE_ENV. */
function disagreements(values: EnvValues): string[] {
  const found: string[] = [];
  if (values.MAX_RESPONSE_BYTES_IN_FLIGHT < values.MAX_RESPONSE_BYTES) {
    found.push('MAX_RESPONSE_BYTES_IN_FLIGHT: must be at least MAX_RESPONSE_BYTES (one answer must fit)');
  }
  if (values.JWT_SECRET !== undefined && values.JWT_JWKS_URL !== undefined) {
    found.push('JWT_SECRET and JWT_JWKS_URL: set one of them, not both');
  }
  if (values.NODE_ENV === 'production' && !values.MONGODB_URI) {
    found.push('MONGODB_URI: required when NODE_ENV=production (the embedded database is for development)');
  }
  if (values.NODE_ENV === 'production' && values.LOG_FORMAT === 'pretty') {
    found.push('LOG_FORMAT: pretty is for development; production writes JSON lines');
  }
  if (values.NODE_ENV === 'production' && !values.JWT_SECRET && !values.JWT_JWKS_URL) {
    found.push('JWT_SECRET or JWT_JWKS_URL: one is required when NODE_ENV=production');
  }
  if (values.NODE_ENV === 'production' && !values.PUBLIC_BASE_URL) {
    // Without it, pagination links would be built from whatever Host header a client sends.
    found.push('PUBLIC_BASE_URL: required when NODE_ENV=production (e.g. https://shop.example.com)');
  }
  if (values.PERSISTED_OPERATIONS === 'trusted-only' && !values.PERSISTED_OPERATIONS_MANIFEST) {
    found.push('PERSISTED_OPERATIONS_MANIFEST: required when PERSISTED_OPERATIONS=trusted-only');
  }
  return found;
}

export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
  stdoutIsTerminal = process.stdout.isTTY === true,
): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`),
    );
  }
  const values = parsed.data;
  const problems: string[] = [];

  const { algorithms, corsOrigins, trustedProxies } = checkedLists(values, problems);
  problems.push(...disagreements(values));
  const production = values.NODE_ENV === 'production';
  const connectionCaps = {
    perServer: values.MAX_CONNECTIONS ?? (production ? PRODUCTION_CONNECTION_CAPS.perServer : 0),
    perAddress:
      values.MAX_CONNECTIONS_PER_ADDRESS ?? (production ? PRODUCTION_CONNECTION_CAPS.perAddress : 0),
  };
  const streams = values.LIVE_SUBSCRIPTIONS_PER_INSTANCE;
  if (streams !== undefined && connectionCaps.perServer > 0 && streams >= connectionCaps.perServer) {
    problems.push(
      `LIVE_SUBSCRIPTIONS_PER_INSTANCE: must be below MAX_CONNECTIONS (${connectionCaps.perServer}), or streams can take every connection`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze({
    env: values.NODE_ENV,
    host: values.HOST,
    port: values.PORT,
    mongo: mongoSettings(values),
    redisUrl: values.REDIS_URL,
    dataDir: path.resolve(cwd, values.DATA_DIR),
    publicBaseUrl: values.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    jwt: Object.freeze({
      secret: values.JWT_SECRET,
      jwksUrl: values.JWT_JWKS_URL,
      algorithms,
      issuer: values.JWT_ISSUER,
      audience: values.JWT_AUDIENCE,
    }),
    storeLocale: values.STORE_LOCALE,
    logLevel: values.LOG_LEVEL,
    logFormat: values.LOG_FORMAT ?? (!production && stdoutIsTerminal ? 'pretty' : 'json'),
    // Sample orders of fictional customers never reach a production database unless asked for.
    seedFixturesWhenEmpty: values.SEED_FIXTURES
      ? values.SEED_FIXTURES === 'true'
      : values.NODE_ENV !== 'production',
    corsOrigins: Object.freeze(corsOrigins) as string[],
    introspection: values.INTROSPECTION ? values.INTROSPECTION === 'true' : values.NODE_ENV !== 'production',
    maxBodyBytes: values.MAX_BODY_BYTES,
    maxResponseBytes: values.MAX_RESPONSE_BYTES,
    maxResponseBytesInFlight: values.MAX_RESPONSE_BYTES_IN_FLIGHT,
    metrics: values.METRICS === 'on',
    requestLog: values.REQUEST_LOG === 'on',
    metricsToken: values.METRICS_TOKEN,
    shutdownDeadlineMs: values.SHUTDOWN_DEADLINE_MS,
    responseCacheTtlMs: values.RESPONSE_CACHE_TTL_MS,
    changeFeed: Object.freeze({
      postgresUrl: values.CHANGE_FEED_POSTGRES_URL,
      waitMs: values.CHANGE_FEED_WAIT_MS,
      slotAbandonMs: values.CHANGE_FEED_SLOT_ABANDON_HOURS * 3_600_000,
      intervalMs: values.CHANGE_FEED_INTERVAL_MS,
      batchSize: values.CHANGE_FEED_BATCH,
      reconcileMs: values.CHANGE_FEED_RECONCILE_MS,
      lookBackMs: values.CHANGE_FEED_LOOKBACK_MS,
    }),
    responseCacheBudget: Object.freeze({
      maxBytes: values.RESPONSE_CACHE_MAX_BYTES,
      maxEntryBytes: values.RESPONSE_CACHE_MAX_ENTRY_BYTES,
    }),
    httpCache: Object.freeze({
      maxAgeSeconds: values.CACHE_MAX_AGE_S,
      staleWhileRevalidateSeconds: values.CACHE_STALE_WHILE_REVALIDATE_S,
    }),
    rateLimit: rateLimitSettings(values, production, trustedProxies),
    connectionCaps: Object.freeze(connectionCaps),
    persistedOperations: Object.freeze({
      mode: values.PERSISTED_OPERATIONS,
      manifestPath: values.PERSISTED_OPERATIONS_MANIFEST
        ? path.resolve(cwd, values.PERSISTED_OPERATIONS_MANIFEST)
        : undefined,
    }),
    compressionMinBytes: values.COMPRESSION_MIN_BYTES,
    liveOrders: Object.freeze(liveOrderLimits(values, connectionCaps)),
    tracing:
      values.OTEL_SDK_DISABLED !== 'true' &&
      (values.OTEL_EXPORTER_OTLP_ENDPOINT ?? values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined,
  });
}

/** Every environment variable the server reads (the README documents each). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);

/** Streams' share of the connection caps when not set: room is always kept for ordinary requests. */
const STREAM_SHARE = { perServer: 0.8, perAddress: 0.5 };
const LIVE_SUBSCRIPTIONS_WITHOUT_CAP = 10_000;

function liveOrderLimits(
  values: EnvValues,
  caps: { perServer: number; perAddress: number },
): Config['liveOrders'] {
  return {
    perCustomer: values.LIVE_SUBSCRIPTIONS_PER_CUSTOMER,
    perInstance:
      values.LIVE_SUBSCRIPTIONS_PER_INSTANCE ??
      (caps.perServer > 0
        ? Math.max(1, Math.floor(caps.perServer * STREAM_SHARE.perServer))
        : LIVE_SUBSCRIPTIONS_WITHOUT_CAP),
    perAddress:
      values.LIVE_SUBSCRIPTIONS_PER_ADDRESS ??
      (caps.perAddress > 0 ? Math.max(1, Math.floor(caps.perAddress * STREAM_SHARE.perAddress)) : 0),
    maxLifetimeMs: values.LIVE_STREAM_MAX_LIFETIME_S * 1_000,
    maxLagMs: values.LIVE_SUBSCRIBER_MAX_LAG_MS,
  };
}

/** The settings given as lists, each entry checked (problems are added to `problems`). */
function checkedLists(values: EnvValues, problems: string[]) {
  const algorithms = parseAlgorithms(
    values.JWT_ALGORITHMS,
    values.JWT_SECRET !== undefined,
    values.JWT_JWKS_URL !== undefined,
  );
  if (typeof algorithms === 'string') problems.push(algorithms);
  else if (values.JWT_SECRET === undefined && values.JWT_JWKS_URL !== undefined) {
    if (algorithms.some((name) => name.startsWith('HS'))) {
      problems.push('JWT_ALGORITHMS: HS* algorithms need JWT_SECRET, not JWT_JWKS_URL');
    }
  }
  const corsOrigins = listOf(values.CORS_ORIGINS);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(`CORS_ORIGINS: "${origin}" must be an origin like https://shop.example.com`);
    }
  }
  const trustedProxies = listOf(values.TRUSTED_PROXIES);
  for (const entry of trustedProxies) {
    try {
      proxyaddr.compile(entry);
    } catch {
      problems.push(
        `TRUSTED_PROXIES: "${entry}" is not an address, a CIDR or loopback/linklocal/uniquelocal`,
      );
    }
  }
  return { algorithms: algorithms as JwtAlgorithm[], corsOrigins, trustedProxies };
}

function mongoSettings(values: EnvValues) {
  return Object.freeze({
    uri: values.MONGODB_URI,
    dbName: values.MONGODB_DB,
    maxPoolSize: values.MONGODB_MAX_POOL_SIZE,
    timeoutMs: values.MONGODB_TIMEOUT_MS,
    admission: Object.freeze({
      // All lanes full still leave a connection for the readiness ping and the change stream.
      concurrency: Math.max(
        1,
        Math.min(
          values.MONGODB_MAX_CONCURRENT_QUERIES,
          Math.floor((values.MONGODB_MAX_POOL_SIZE - 1 - values.MONGODB_MAX_CONCURRENT_WORD_SCANS) / 2),
        ),
      ),
      queue: values.MONGODB_MAX_QUEUED_QUERIES,
      // Searches of 1–2-character words only (a scan each): their own lane, never wider than the others.
      wordScans: Math.min(values.MONGODB_MAX_CONCURRENT_WORD_SCANS, values.MONGODB_MAX_CONCURRENT_QUERIES),
      wordScanShare: values.MONGODB_WORD_SCAN_BUSY_PERCENT / 100,
    }),
    monitorCommands: values.MONGODB_MONITOR_COMMANDS === 'true',
    readPreference: values.MONGODB_READ_PREFERENCE,
  });
}

function rateLimitSettings(values: EnvValues, production: boolean, trustedProxies: string[]) {
  return Object.freeze({
    requestsPerMinute:
      values.RATE_LIMIT_REQUESTS_PER_MINUTE ?? (production ? PRODUCTION_RATE_LIMITS.requestsPerMinute : 0),
    costPerMinute:
      values.RATE_LIMIT_COST_PER_MINUTE ?? (production ? PRODUCTION_RATE_LIMITS.costPerMinute : 0),
    failOpen: values.RATE_LIMIT_FAIL_OPEN === 'true',
    trustedProxies: Object.freeze(trustedProxies) as string[],
  });
}
