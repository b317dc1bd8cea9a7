import type { AppDependencies } from './app-dependencies';
import { isRestExecution } from './context';
import { createClientKey } from './limits/client-key';
import { createClientLimiter } from './limits/limiter';
import { useRateLimits } from './limits/use-rate-limits';

/** The rate limits by request and by cost, per client, shared by the fleet through Redis when there is one. */
export function createRateLimits({ config, logger, redis, resolveViewer }: AppDependencies) {
  const { rateLimit } = config;
  const clientKey = createClientKey({ resolveViewer, trustedProxies: rateLimit.trustedProxies });
  const limiter = (name: string, pointsPerMinute: number) =>
    pointsPerMinute > 0
      ? createClientLimiter({ name, pointsPerMinute, redis, failOpen: rateLimit.failOpen })
      : undefined;
  if (
    config.env === 'production' &&
    rateLimit.requestsPerMinute > 0 &&
    rateLimit.trustedProxies.length === 0
  ) {
    logger.warn(
      'rate limits count by peer address and TRUSTED_PROXIES is empty: behind a load balancer, set it',
    );
  }
  const rateLimits = useRateLimits({
    requests: limiter('requests', rateLimit.requestsPerMinute),
    cost: limiter('cost', rateLimit.costPerMinute),
    clientKey,
    isTrusted: isRestExecution,
  });
  return { rateLimits, clientKey };
}
