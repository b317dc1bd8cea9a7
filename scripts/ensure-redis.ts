import {
  findRedisServer,
  REDIS_PACKAGE,
  redisMissingMessage,
  redisSuitesSkipped,
  SKIP_REDIS_VARIABLE,
} from '../test/support/redis-server';
import { aptInstall } from './apt-install';

/**
 * `npm test`'s first step: the Redis-backed suites need `redis-server` (they start private ones,
 * never the system service). When it is missing, install Debian's package with apt-get, as root or
 * through passwordless sudo; when that cannot be done, say in one line what to install or how to
 * skip those suites, and fail. Present, or skipped on purpose: nothing to do.
 */

if (redisSuitesSkipped()) {
  console.log(
    `${SKIP_REDIS_VARIABLE}=1: the Redis-backed suites are skipped (vitest lists them as skipped).`,
  );
  process.exit(0);
}
if (findRedisServer()) process.exit(0);

const failure = aptInstall(REDIS_PACKAGE, 'the Redis-backed tests');
if (failure) {
  console.error(redisMissingMessage(failure));
  process.exit(1);
}
if (!findRedisServer()) {
  console.error(redisMissingMessage(`apt-get's ${REDIS_PACKAGE} did not put it there`));
  process.exit(1);
}
