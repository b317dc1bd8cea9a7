import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** The suite, and every process it starts, runs on the Node the project declares (24 LTS). */
describe('runtime', () => {
  it('runs the tests on Node 24', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });

  it('starts child processes (servers, scripts) on the same Node', () => {
    const version = execFileSync(process.execPath, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(version.split('.')[0]).toBe('24');
  });

  it('gives npm scripts the project-local Node 24 first on PATH', () => {
    const version = execFileSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
    expect(version.split('.')[0]).toBe('24');
  });
});
