import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * `npm test`'s Redis set-up (scripts/ensure-redis.ts) on machines it cannot otherwise be tried on:
 * a PATH without redis-server, whose apt-get and sudo are small logging stand-ins (the real
 * install is proven on a fresh machine; this one's redis-server is never touched).
 */

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function runChild(args: string[], env: NodeJS.ProcessEnv, uid?: number): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { env, uid, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const ensureRedis = (env: NodeJS.ProcessEnv, uid?: number) =>
  runChild(['--import', 'tsx', 'scripts/ensure-redis.ts'], { HOME: tmpdir(), ...env }, uid);

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A PATH folder any user can read, with the given shell scripts (which may use the system's tools). */
function toolFolder(tools: Record<string, string> = {}): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'ensure-redis-'));
  folders.push(folder);
  chmodSync(folder, 0o777);
  for (const [name, script] of Object.entries(tools)) {
    writeFileSync(path.join(folder, name), `#!/bin/sh\nPATH="$PATH:/usr/bin:/bin"\n${script}\n`, {
      mode: 0o755,
    });
  }
  return folder;
}

/** apt-get that records each call (with DEBIAN_FRONTEND) and "installs" redis-server beside itself. */
const LOGGING_APT_GET = `
echo "$DEBIAN_FRONTEND $*" >> "$(dirname "$0")/apt.log"
[ "$1" = install ] && printf '#!/bin/sh\\n' > "$(dirname "$0")/redis-server" && chmod 755 "$(dirname "$0")/redis-server"
exit 0`;

/** sudo that records its arguments and runs the command (it is no more root than we are). */
const LOGGING_SUDO = `
echo "$*" >> "$(dirname "$0")/sudo.log"
[ "$1" = -n ] && shift
exec "$@"`;

const aptCalls = (folder: string) =>
  existsSync(path.join(folder, 'apt.log'))
    ? readFileSync(path.join(folder, 'apt.log'), 'utf8').trim().split('\n')
    : [];

const INSTALL_OR_SKIP =
  /: install it \(Debian\/Ubuntu: sudo apt-get install redis-server; any Redis ≥ 6 on PATH will do\) or set SKIP_REDIS_TESTS=1 to skip the Redis-backed suites\.\n$/;
const isRoot = process.getuid?.() === 0;
const NOBODY = 65_534;
/**
 * The user-without-root cases run this checkout's Node as `nobody`: only where that user can
 * reach it (a clone inside a private folder, such as `mktemp -d`'s 0700, cannot be; they are
 * then skipped rather than failed for the folder's sake).
 */
const nobodyReachesCheckout =
  isRoot && spawnSync(process.execPath, ['-e', ''], { uid: NOBODY, timeout: 10_000 }).status === 0;

describe('npm test: making sure of redis-server', () => {
  it('does nothing, quietly, when redis-server is on PATH', async () => {
    const folder = toolFolder({ 'redis-server': 'exit 0', 'apt-get': LOGGING_APT_GET });
    expect(await ensureRedis({ PATH: folder })).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(aptCalls(folder)).toEqual([]);
  });

  it('installs the package with apt-get, non-interactively, when it is missing', async () => {
    const folder = toolFolder({ 'apt-get': LOGGING_APT_GET, sudo: LOGGING_SUDO });
    const outcome = await ensureRedis({ PATH: folder });
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(
      /^Installing Debian's redis-server .*\nInstalled redis-server in \d+\.\d s\.\n$/,
    );
    expect(aptCalls(folder)).toEqual([
      'noninteractive update -qq',
      'noninteractive install -y -qq --no-install-recommends redis-server',
    ]);
    expect(existsSync(path.join(folder, 'redis-server'))).toBe(true);
  });

  it('without apt-get, fails with one line: what to install, or how to skip', async () => {
    const outcome = await ensureRedis({ PATH: toolFolder() });
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toMatch(/^redis-server not found on PATH and this system has no apt-get: /);
    expect(outcome.stderr).toMatch(INSTALL_OR_SKIP);
    expect(outcome.stderr.split('\n')).toHaveLength(2);
  });

  it('when apt-get fails, shows its error and then the one line, and fails', async () => {
    const outcome = await ensureRedis({
      PATH: toolFolder({
        'apt-get': 'echo "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2; exit 100',
        sudo: LOGGING_SUDO,
      }),
    });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr.split('\n')).toEqual([
      'E: Could not get lock /var/lib/dpkg/lock-frontend',
      expect.stringMatching(/^redis-server not found on PATH and `apt-get update -qq` failed: /),
      '',
    ]);
    expect(outcome.stderr).toMatch(INSTALL_OR_SKIP);
  });

  it.runIf(nobodyReachesCheckout)(
    'as a user without root or sudo, does not try apt-get and says so in one line',
    async () => {
      const folder = toolFolder({ 'apt-get': LOGGING_APT_GET });
      const outcome = await ensureRedis({ PATH: folder }, NOBODY);
      expect(outcome.code).toBe(1);
      expect(outcome.stderr.split('\n')).toEqual([
        expect.stringMatching(/^redis-server not found on PATH and installing it needs root \(run as root/),
        '',
      ]);
      expect(aptCalls(folder)).toEqual([]);
    },
  );

  it.runIf(nobodyReachesCheckout)(
    'as a user with passwordless sudo, runs apt-get through sudo -n',
    async () => {
      const folder = toolFolder({
        'apt-get': LOGGING_APT_GET,
        sudo: LOGGING_SUDO,
      });
      const outcome = await ensureRedis({ PATH: folder }, NOBODY);
      expect(outcome.code).toBe(0);
      expect(readFileSync(path.join(folder, 'sudo.log'), 'utf8')).toBe(
        [
          '-n true',
          `-n env DEBIAN_FRONTEND=noninteractive ${folder}/apt-get update -qq`,
          `-n env DEBIAN_FRONTEND=noninteractive ${folder}/apt-get install -y -qq --no-install-recommends redis-server`,
          '',
        ].join('\n'),
      );
      expect(aptCalls(folder)).toHaveLength(2);
    },
  );

  it('with SKIP_REDIS_TESTS=1, installs nothing and says the suites are skipped', async () => {
    const folder = toolFolder({ 'apt-get': LOGGING_APT_GET });
    const outcome = await ensureRedis({ PATH: folder, SKIP_REDIS_TESTS: '1' });
    expect(outcome).toEqual({
      code: 0,
      stdout: 'SKIP_REDIS_TESTS=1: the Redis-backed suites are skipped (vitest lists them as skipped).\n',
      stderr: '',
    });
    expect(aptCalls(folder)).toEqual([]);
  });
});

interface VitestReport {
  numTotalTests: number;
  numPassedTests: number;
  numPendingTests: number;
  numFailedTests: number;
}

/** vitest on one Redis-backed file, in a child process; the database is not needed for this. */
async function vitestOn(file: string, env: NodeJS.ProcessEnv): Promise<Outcome & { report: VitestReport }> {
  const folder = toolFolder();
  const reportFile = path.join(folder, 'report.json');
  const outcome = await runChild(
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      file,
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${reportFile}`,
    ],
    { HOME: tmpdir(), MONGODB_URI: 'mongodb://127.0.0.1:9/', NO_COLOR: '1', ...env },
  );
  return { ...outcome, report: JSON.parse(readFileSync(reportFile, 'utf8')) as VitestReport };
}

describe('the Redis-backed suites', () => {
  it('with SKIP_REDIS_TESTS=1, are reported skipped, with the reason for each suite, and start no Redis', async () => {
    const { code, stderr, report } = await vitestOn('test/store/redis.test.ts', {
      PATH: toolFolder(),
      SKIP_REDIS_TESTS: '1',
    });
    expect(code).toBe(0);
    expect(report.numTotalTests).toBeGreaterThan(0);
    expect(report.numPendingTests).toBe(report.numTotalTests);
    expect(stderr).toContain(
      'skipped "the shared store client": SKIP_REDIS_TESTS=1 (the suite needs redis-server)',
    );
    expect(stderr).toContain('skipped "/readyz with a shared store": SKIP_REDIS_TESTS=1');
  });

  it('without redis-server and without the skip, fail with the one line', async () => {
    const { code, stdout, stderr, report } = await vitestOn('test/store/redis.test.ts', {
      PATH: toolFolder(),
    });
    expect(code).toBe(1);
    expect(report.numPassedTests).toBe(0);
    expect(stdout + stderr).toContain(
      'Error: redis-server not found on PATH: install it (Debian/Ubuntu: sudo apt-get install redis-server;',
    );
  });
});
