import { ConfigError, loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { connectRedis } from '../src/store/redis';
import { purgeAll, purgeTags } from '../src/store/response-store';
import { readCommandLine, usageError } from './command-line';

/** Drops shared response-cache entries: those holding given products, or all of them. */

const usage = 'Usage: npm run cache:purge -- --product <id> [--product <id> …] | --all';
const { values } = readCommandLine(usage, {
  product: { type: 'string', multiple: true },
  all: { type: 'boolean' },
});
const products = values.product ?? [];
if (products.length > 0 === Boolean(values.all)) usageError('Give --product or --all (not both).', usage);
const badIds = products.filter((id) => !/^[1-9][0-9]{0,15}$/.test(id));
if (badIds.length > 0) usageError(`Not a product id: ${badIds.join(', ')} (a positive whole number).`, usage);

let config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : String(error));
  process.exit(2);
}
if (!config.redisUrl) {
  console.error(
    'REDIS_URL is not set: without a shared store each server caches for itself, and its entries ' +
      `expire within RESPONSE_CACHE_TTL_MS (${config.responseCacheTtlMs} ms).`,
  );
  process.exit(2);
}

const redis = connectRedis({ url: config.redisUrl, logger: createLogger('silent'), commandTimeoutMs: 5_000 });
try {
  await new Promise<void>((resolve, reject) => {
    if (redis.isReady()) return resolve();
    redis.client.once('ready', resolve);
    setTimeout(() => reject(new Error('no connection within 5 s')), 5_000).unref();
  });
  const purged = values.all
    ? await purgeAll(redis)
    : await purgeTags(
        redis,
        products.map((id) => `product:${id}`),
      );
  console.log(
    values.all
      ? `Purged ${purged} cached entries.`
      : `Purged ${purged} cached responses holding product ${products.join(', ')}.`,
  );
} catch (error) {
  console.error(`Cannot reach Redis at ${config.redisUrl}: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  redis.client.disconnect();
}
