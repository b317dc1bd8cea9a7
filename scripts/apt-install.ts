import { spawnSync } from 'node:child_process';
import { findOnPath } from '../test/support/redis-server';

/**
 * Installs one Debian package with apt-get (`update`, then `install --no-install-recommends`), as
 * root or through passwordless sudo, for `npm test`'s set-up steps. Returns why it could not, or
 * undefined when apt-get succeeded; apt's own error goes to the terminal as the detail behind it.
 */
export function aptInstall(pkg: string, purpose: string): string | undefined {
  const aptGet = findOnPath('apt-get');
  if (!aptGet) return 'this system has no apt-get';
  const asRoot = aptGetAsRoot(aptGet);
  if (!asRoot) return 'installing it needs root (run as root, or with passwordless sudo)';
  console.log(`Installing Debian's ${pkg} for ${purpose} (apt-get, once)…`);
  const started = Date.now();
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', pkg],
  ]) {
    const result = spawnSync(asRoot[0], [...asRoot.slice(1), ...args], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (result.status !== 0) return `\`apt-get ${args.join(' ')}\` failed`;
  }
  console.log(`Installed ${pkg} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
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
