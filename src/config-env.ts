import { z } from 'zod';

/** The environment variables the server reads, validated: the one schema src/config.ts applies. */

export const JWT_ALGORITHMS = [
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
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** JSON lines (production, pipes, log shippers) or pino-pretty's lines for a person at a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;

export const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

/** A whole number from `min` to `max`, with the same messages for every such setting. */
export const wholeNumber = (min: number, max: number) =>
  z.coerce
    .number({ message: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be between ${min} and ${max}`)
    .max(max, `must be between ${min} and ${max}`);

export const port = wholeNumber(0, 65535);

export const absoluteHttpUrl = z
  .string()
  .trim()
  .url('must be an absolute http(s) URL')
  .refine((value) => /^https?:\/\//.test(value), 'must be an absolute http(s) URL');

export function isKnownLocale(locale: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf([locale]).length === 1;
  } catch {
    return false;
  }
}

export const perMinute = wholeNumber(0, 100_000_000);
/**
 * Cost points a minute: one kept `categories` answer is priced as the scan it replaces (10,000),
 * so a ceiling one client never reaches (the bench's) is past 100,000,000.
 */
export const costPerMinute = wholeNumber(0, 1_000_000_000_000);

/** Production defaults of the per-client limits (0 = off, the default elsewhere). */
export const PRODUCTION_RATE_LIMITS = { requestsPerMinute: 600, costPerMinute: 1_000_000 };
/** Production defaults of the connection caps (0 = off, the default elsewhere). */
export const PRODUCTION_CONNECTION_CAPS = { perServer: 10_000, perAddress: 256 };

export const envSchema = z.object({
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
  LOG_FORMAT: z.enum(LOG_FORMATS).optional(),
  SEED_FIXTURES: z.enum(['true', 'false']).optional(),
  MONGODB_MAX_POOL_SIZE: wholeNumber(1, 1000).default(20),
  MONGODB_TIMEOUT_MS: wholeNumber(100, 60_000).default(3_000),
  MONGODB_MAX_CONCURRENT_QUERIES: wholeNumber(1, 500).default(8),
  MONGODB_MAX_QUEUED_QUERIES: wholeNumber(0, 10_000).default(128),
  MONGODB_MAX_CONCURRENT_WORD_SCANS: wholeNumber(1, 500).default(1),
  MONGODB_WORD_SCAN_BUSY_PERCENT: wholeNumber(1, 100).default(30),
  MONGODB_MONITOR_COMMANDS: z.enum(['true', 'false']).default('false'),
  CORS_ORIGINS: optionalText,
  INTROSPECTION: z.enum(['true', 'false']).optional(),
  MAX_BODY_BYTES: wholeNumber(1_024, 10_485_760).default(102_400),
  MAX_RESPONSE_BYTES: wholeNumber(1_024, 104_857_600).default(2_097_152),
  MAX_RESPONSE_BYTES_IN_FLIGHT: wholeNumber(1_024, 4_294_967_296).default(16_777_216),
  SHUTDOWN_DEADLINE_MS: wholeNumber(0, 600_000).default(10_000),
  RESPONSE_CACHE_TTL_MS: wholeNumber(0, 86_400_000).default(10_000),
  CHANGE_FEED_POSTGRES_URL: optionalText,
  CHANGE_FEED_WAIT_MS: wholeNumber(0, 10_000).default(1_000),
  CHANGE_FEED_SLOT_ABANDON_HOURS: wholeNumber(1, 8_760).default(168),
  CHANGE_FEED_INTERVAL_MS: wholeNumber(100, 60_000).default(1_000),
  CHANGE_FEED_BATCH: wholeNumber(10, 10_000).default(500),
  CHANGE_FEED_RECONCILE_MS: wholeNumber(1_000, 3_600_000).default(10_000),
  CHANGE_FEED_LOOKBACK_MS: wholeNumber(0, 300_000).default(5_000),
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
  RATE_LIMIT_COST_PER_MINUTE: costPerMinute.optional(),
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
  LIVE_SUBSCRIPTIONS_PER_CUSTOMER: wholeNumber(1, 10_000).default(10),
  LIVE_SUBSCRIPTIONS_PER_INSTANCE: wholeNumber(0, 1_000_000).optional(),
  LIVE_SUBSCRIPTIONS_PER_ADDRESS: wholeNumber(0, 1_000_000).optional(),
  LIVE_STREAM_MAX_LIFETIME_S: wholeNumber(1, 604_800).default(3_600),
  LIVE_SUBSCRIBER_MAX_LAG_MS: wholeNumber(100, 600_000).default(5_000),
  // Read here only to decide whether tracing is on; the OpenTelemetry SDK reads the OTEL_* itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(absoluteHttpUrl.optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalText.pipe(absoluteHttpUrl.optional()),
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).default('false'),
});

export type EnvValues = z.infer<typeof envSchema>;
