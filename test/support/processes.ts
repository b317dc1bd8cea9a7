import { execFileSync } from 'node:child_process';

/** PIDs of processes whose command line mentions `needle` (e.g. a throw-away data folder). */
export function processesMentioning(needle: string): number[] {
  const output = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return output
    .split('\n')
    .filter((line) => line.includes(needle) && !line.includes('ps -eo'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

export async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}
