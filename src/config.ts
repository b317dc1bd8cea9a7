import path from 'node:path';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';

/** The only reader of process.env. Everything else receives a validated, frozen Config. */

const JWT_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

/** A whole number from `min` to `max`, with the same messages for every such setting. */
const wholeNumber = (min: number, max: number) =>
  z.coerce
    .number({ message: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);

const port = wholeNumber(0, 65535);

const absoluteHttpUrl = z
  .string()
  .trim()
  .url('must be an absolute http(s) URL')
  .refine((value) => /^https?:\/\//.test(value), 'must be an absolute http(s) URL');

function isKnownLocale(locale: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf([locale]).length === 1;
  } catch {
    return false;
  }
}

const perMinute = wholeNumber(0, 100_000_000);

/** Production defaults of the per-client limits (0 = off, the default elsewhere). */
const PRODUCTION_RATE_LIMITS = { requestsPerMinute: 600, costPerMinute: 1_000_000 };
/** Production defaults of the connection caps (0 = off, the default elsewhere). */
const PRODUCTION_CONNECTION_CAPS = { perServer: 10_000, perAddress: 256 };

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  PORT: port.default(4000),
  MONGODB_URI: optionalText.pipe(
    z
      .string()
      .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
      .optional(),
  ),
  MONGODB_DB: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, 'must be 1-63 letters, digits, _ or -')
    .default('storefront'),
  DATA_DIR: z.string().trim().min(1).default('data'),
  PUBLIC_BASE_URL: optionalText.pipe(absoluteHttpUrl.optional()),
  JWT_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  JWT_JWKS_URL: optionalText.pipe(absoluteHttpUrl.optional()),
  JWT_ALGORITHMS: optionalText,
  JWT_ISSUER: optionalText,
  JWT_AUDIENCE: optionalText,
  STORE_LOCALE: z
    .string()
    .trim()
    .refine(isKnownLocale, 'must be a locale this Node.js knows')
    .default('en-US'),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  SEED_FIXTURES: z.enum(['true', 'false']).optional(),
  MONGODB_MAX_POOL_SIZE: wholeNumber(1, 1000).default(20),
  MONGODB_TIMEOUT_MS: wholeNumber(100, 60_000).default(3_000),
  MONGODB_MAX_CONCURRENT_QUERIES: wholeNumber(1, 500).default(8),
  MONGODB_MAX_QUEUED_QUERIES: wholeNumber(0, 10_000).default(128),
  MONGODB_MONITOR_COMMANDS: z.enum(['true', 'false']).default('false'),
  CORS_ORIGINS: optionalText,
  INTROSPECTION: z.enum(['true', 'false']).optional(),
  MAX_BODY_BYTES: wholeNumber(1_024, 10_485_760).default(102_400),
  MAX_RESPONSE_BYTES: wholeNumber(1_024, 104_857_600).default(2_097_152),
  MAX_RESPONSE_BYTES_IN_FLIGHT: wholeNumber(1_024, 4_294_967_296).default(16_777_216),
  SHUTDOWN_DEADLINE_MS: wholeNumber(0, 600_000).default(10_000),
  RESPONSE_CACHE_TTL_MS: wholeNumber(0, 86_400_000).default(10_000),
  RESPONSE_CACHE_MAX_BYTES: wholeNumber(0, 4_294_967_296).default(33_554_432),
  RESPONSE_CACHE_MAX_ENTRY_BYTES: wholeNumber(0, 104_857_600).default(1_048_576),
  METRICS: z.enum(['on', 'off']).default('on'),
  REQUEST_LOG: z.enum(['on', 'off']).default('on'),
  METRICS_TOKEN: optionalText.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  REDIS_URL: optionalText.pipe(
    z
      .string()
      .regex(/^rediss?:\/\/\S+$/, 'must start with redis:// or rediss://')
      .optional(),
  ),
  RATE_LIMIT_REQUESTS_PER_MINUTE: perMinute.optional(),
  RATE_LIMIT_COST_PER_MINUTE: perMinute.optional(),
  RATE_LIMIT_FAIL_OPEN: z.enum(['true', 'false']).default('true'),
  MAX_CONNECTIONS: wholeNumber(0, 1_000_000).optional(),
  MAX_CONNECTIONS_PER_ADDRESS: wholeNumber(0, 1_000_000).optional(),
  TRUSTED_PROXIES: optionalText,
  PERSISTED_OPERATIONS: z.enum(['off', 'apq', 'trusted-only']).default('off'),
  PERSISTED_OPERATIONS_MANIFEST: optionalText,
  MONGODB_READ_PREFERENCE: z
    .enum(['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest'])
    .default('primary'),
  CACHE_MAX_AGE_S: wholeNumber(0, 86_400).default(10),
  CACHE_STALE_WHILE_REVALIDATE_S: wholeNumber(0, 86_400).default(30),
  COMPRESSION_MIN_BYTES: wholeNumber(0, 104_857_600).default(1_024),
  // Read here only to decide whether tracing is on; the OpenTelemetry SDK reads the OTEL_* itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(absoluteHttpUrl.optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalText.pipe(absoluteHttpUrl.optional()),
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).default('false'),
});

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
     * Admission control, per lane (cheap lookups by key; everything else): queries running at
     * once, and queries waiting for a turn. Past both the APIs answer 503 at once.
     */
    admission: { concurrency: number; queue: number };
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

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`),
    );
  }
  const values = parsed.data;
  const problems: string[] = [];

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
  if (values.MAX_RESPONSE_BYTES_IN_FLIGHT < values.MAX_RESPONSE_BYTES) {
    problems.push('MAX_RESPONSE_BYTES_IN_FLIGHT: must be at least MAX_RESPONSE_BYTES (one answer must fit)');
  }
  if (values.JWT_SECRET !== undefined && values.JWT_JWKS_URL !== undefined) {
    problems.push('JWT_SECRET and JWT_JWKS_URL: set one of them, not both');
  }
  if (values.NODE_ENV === 'production' && !values.MONGODB_URI) {
    problems.push(
      'MONGODB_URI: required when NODE_ENV=production (the embedded database is for development)',
    );
  }
  if (values.NODE_ENV === 'production' && !values.JWT_SECRET && !values.JWT_JWKS_URL) {
    problems.push('JWT_SECRET or JWT_JWKS_URL: one is required when NODE_ENV=production');
  }
  if (values.NODE_ENV === 'production' && !values.PUBLIC_BASE_URL) {
    // Without it, pagination links would be built from whatever Host header a client sends.
    problems.push('PUBLIC_BASE_URL: required when NODE_ENV=production (e.g. https://shop.example.com)');
  }
  const corsOrigins = (values.CORS_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) {
      problems.push(`CORS_ORIGINS: "${origin}" must be an origin like https://shop.example.com`);
    }
  }
  const trustedProxies = (values.TRUSTED_PROXIES ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of trustedProxies) {
    try {
      proxyaddr.compile(entry);
    } catch {
      problems.push(
        `TRUSTED_PROXIES: "${entry}" is not an address, a CIDR or loopback/linklocal/uniquelocal`,
      );
    }
  }
  if (values.PERSISTED_OPERATIONS === 'trusted-only' && !values.PERSISTED_OPERATIONS_MANIFEST) {
    problems.push('PERSISTED_OPERATIONS_MANIFEST: required when PERSISTED_OPERATIONS=trusted-only');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const production = values.NODE_ENV === 'production';

  return Object.freeze({
    env: values.NODE_ENV,
    host: values.HOST,
    port: values.PORT,
    mongo: Object.freeze({
      uri: values.MONGODB_URI,
      dbName: values.MONGODB_DB,
      maxPoolSize: values.MONGODB_MAX_POOL_SIZE,
      timeoutMs: values.MONGODB_TIMEOUT_MS,
      admission: Object.freeze({
        // Both lanes full still leave a connection for the readiness ping and the change stream.
        concurrency: Math.max(
          1,
          Math.min(values.MONGODB_MAX_CONCURRENT_QUERIES, Math.floor((values.MONGODB_MAX_POOL_SIZE - 1) / 2)),
        ),
        queue: values.MONGODB_MAX_QUEUED_QUERIES,
      }),
      monitorCommands: values.MONGODB_MONITOR_COMMANDS === 'true',
      readPreference: values.MONGODB_READ_PREFERENCE,
    }),
    redisUrl: values.REDIS_URL,
    dataDir: path.resolve(cwd, values.DATA_DIR),
    publicBaseUrl: values.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    jwt: Object.freeze({
      secret: values.JWT_SECRET,
      jwksUrl: values.JWT_JWKS_URL,
      algorithms: algorithms as JwtAlgorithm[],
      issuer: values.JWT_ISSUER,
      audience: values.JWT_AUDIENCE,
    }),
    storeLocale: values.STORE_LOCALE,
    logLevel: values.LOG_LEVEL,
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
    responseCacheBudget: Object.freeze({
      maxBytes: values.RESPONSE_CACHE_MAX_BYTES,
      maxEntryBytes: values.RESPONSE_CACHE_MAX_ENTRY_BYTES,
    }),
    httpCache: Object.freeze({
      maxAgeSeconds: values.CACHE_MAX_AGE_S,
      staleWhileRevalidateSeconds: values.CACHE_STALE_WHILE_REVALIDATE_S,
    }),
    rateLimit: Object.freeze({
      requestsPerMinute:
        values.RATE_LIMIT_REQUESTS_PER_MINUTE ?? (production ? PRODUCTION_RATE_LIMITS.requestsPerMinute : 0),
      costPerMinute:
        values.RATE_LIMIT_COST_PER_MINUTE ?? (production ? PRODUCTION_RATE_LIMITS.costPerMinute : 0),
      failOpen: values.RATE_LIMIT_FAIL_OPEN === 'true',
      trustedProxies: Object.freeze(trustedProxies) as string[],
    }),
    connectionCaps: Object.freeze({
      perServer: values.MAX_CONNECTIONS ?? (production ? PRODUCTION_CONNECTION_CAPS.perServer : 0),
      perAddress:
        values.MAX_CONNECTIONS_PER_ADDRESS ?? (production ? PRODUCTION_CONNECTION_CAPS.perAddress : 0),
    }),
    persistedOperations: Object.freeze({
      mode: values.PERSISTED_OPERATIONS,
      manifestPath: values.PERSISTED_OPERATIONS_MANIFEST
        ? path.resolve(cwd, values.PERSISTED_OPERATIONS_MANIFEST)
        : undefined,
    }),
    compressionMinBytes: values.COMPRESSION_MIN_BYTES,
    tracing:
      values.OTEL_SDK_DISABLED !== 'true' &&
      (values.OTEL_EXPORTER_OTLP_ENDPOINT ?? values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined,
  });
}

/** Every environment variable the server reads (the README documents each). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);
