import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS } from '../scripts/node-flags';

/** The suite, and every process it starts, runs on the Node the project declares (24 LTS). */
describe('runtime', () => {
  it('runs the tests on Node 24', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });

  it('starts child processes (servers, scripts) on the same Node', () => {
    const version = execFileSync(process.execPath, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(version.split('.')[0]).toBe('24');
  });

  it('starts the server with the declared V8 flags, which this Node accepts', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const name of ['start', 'start:production'])
      expect(scripts[name]).toMatch(/^node \$npm_package_config_nodeFlags /);
    expect(SERVER_NODE_FLAGS).toContain('--max-semi-space-size=16');
    const argv = execFileSync(process.execPath, [...SERVER_NODE_FLAGS, '-p', 'process.execArgv.join(" ")'], {
      encoding: 'utf8',
    });
    expect(argv.startsWith(`${SERVER_NODE_FLAGS.join(' ')} `)).toBe(true);
  });

  it('gives npm scripts the project-local Node 24 first on PATH', () => {
    const version = execFileSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(version.split('.')[0]).toBe('24');
  });
});
