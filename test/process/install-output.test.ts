import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Issue 37: `npm ci` with the system's older Node (Debian 12's 20) ran npm's engine check against
 * that Node and printed 45 EBADENGINE lines before the project's own Node 24 took over. npm's plan
 * (a dry run: the lockfile only, no download) in a copy of the project's install files.
 */

/** A `node` on PATH older than 24 (the system's, not node_modules/.bin's), if there is one. */
function olderSystemNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (dir.includes('node_modules') || !existsSync(candidate)) continue;
    const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (Number(version.split('.')[0]) < 24) return candidate;
  }
  return undefined;
}

function npmCli(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'npm');
    if (!dir.includes('node_modules') && existsSync(candidate)) return realpathSync(candidate);
  }
  return undefined;
}

const node = olderSystemNode();
const npm = npmCli();
const project = mkdtempSync(path.join(os.tmpdir(), 'storefront-install-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** npm ci's plan as a newcomer's shell runs it: no npm_config_* from the npm that runs the tests. */
function dryRunCi(...args: string[]): { status: number | null; output: string } {
  for (const file of ['package.json', 'package-lock.json', '.npmrc'])
    copyFileSync(file, path.join(project, file));
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  const result = spawnSync(node!, [npm!, 'ci', '--dry-run', ...args], {
    cwd: project,
    env,
    encoding: 'utf8',
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe.skipIf(!node || !npm)('npm ci on a system Node older than 24', () => {
  it('prints no EBADENGINE line (with --loglevel=warn npm still shows them)', () => {
    const quiet = dryRunCi();
    expect(quiet.status, quiet.output).toBe(0);
    expect(quiet.output).not.toMatch(/EBADENGINE|npm warn/);
    // What .npmrc's loglevel hides: one 5-line warning per dependency that needs Node 22+.
    const loud = dryRunCi('--loglevel=warn');
    expect(loud.output.match(/EBADENGINE/g)?.length ?? 0).toBeGreaterThan(10);
  });
});
