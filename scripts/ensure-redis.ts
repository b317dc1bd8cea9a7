import { spawnSync } from 'node:child_process';
import {
  findOnPath,
  findRedisServer,
  REDIS_PACKAGE,
  redisMissingMessage,
  redisSuitesSkipped,
  SKIP_REDIS_VARIABLE,
} from '../test/support/redis-server';

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

const failure = install();
if (failure) {
  console.error(redisMissingMessage(failure));
  process.exit(1);
}
if (!findRedisServer()) {
  console.error(redisMissingMessage(`apt-get's ${REDIS_PACKAGE} did not put it there`));
  process.exit(1);
}

/** Installs the package; returns why it could not, or undefined when apt-get succeeded. */
function install(): string | undefined {
  const aptGet = findOnPath('apt-get');
  if (!aptGet) return 'this system has no apt-get';
  const asRoot = aptGetAsRoot(aptGet);
  if (!asRoot) return 'installing it needs root (run as root, or with passwordless sudo)';
  console.log(`Installing Debian's ${REDIS_PACKAGE} for the Redis-backed tests (apt-get, once)…`);
  const started = Date.now();
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', REDIS_PACKAGE],
  ]) {
    // apt's own messages go to the terminal: its error is the detail behind our one line.
    const result = spawnSync(asRoot[0], [...asRoot.slice(1), ...args], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (result.status !== 0) return `\`apt-get ${args.join(' ')}\` failed`;
  }
  console.log(`Installed ${REDIS_PACKAGE} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  return undefined;
}

/** apt-get as root: itself when we are root, through `sudo -n` when that needs no password. */
function aptGetAsRoot(aptGet: string): [string, ...string[]] | undefined {
  if (process.getuid?.() === 0) return [aptGet];
  const sudo = findOnPath('sudo');
  if (!sudo || spawnSync(sudo, ['-n', 'true'], { stdio: 'ignore' }).status !== 0) return undefined;
  // sudo resets the environment: the variable goes in through env.
  return [sudo, '-n', 'env', 'DEBIAN_FRONTEND=noninteractive', aptGet];
}
