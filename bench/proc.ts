import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import os from 'node:os';

/** Per-process CPU and memory from Linux /proc, read from outside the measured process. */

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * User + system CPU time of the whole process (all threads), in milliseconds; null when gone.
 * `withReapedChildren` adds the CPU of the children it has waited for: summed over a process tree,
 * that keeps counting PostgreSQL backends after they exit.
 */
export function cpuMs(pid: number, withReapedChildren = false): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces: fields are counted after its closing ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const reaped = withReapedChildren ? Number(fields[13]) + Number(fields[14]) : 0;
  return ((utime + stime + reaped) * 1000) / clockTicks();
}

export function totalCpuMs(pids: readonly number[], withReapedChildren = false): number {
  return pids.reduce((sum, pid) => sum + (cpuMs(pid, withReapedChildren) ?? 0), 0);
}

/** Every live process under `pid` (children, their children, …). */
export async function descendants(pid: number): Promise<number[]> {
  const found: number[] = [];
  const walk = async (parent: number) => {
    let tasks: string[] = [];
    try {
      tasks = await readdir(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      const children = await readFile(`/proc/${parent}/task/${task}/children`, 'utf8').catch(() => '');
      for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
        found.push(child);
        await walk(child);
      }
    }
  };
  await walk(pid);
  return found;
}

function statusKb(pid: number, field: string): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Peak resident set size (VmHWM) in MiB. */
export function peakRssMb(pid: number): number | null {
  const kb = statusKb(pid, 'VmHWM');
  return kb === null ? null : kb / 1024;
}

export function rssMb(pid: number): number | null {
  const kb = statusKb(pid, 'VmRSS');
  return kb === null ? null : kb / 1024;
}

/**
 * Resets VmHWM to the current RSS (`echo 5 > /proc/PID/clear_refs`, Linux ≥ 4.0), so the next
 * reading is the peak of one run rather than of the process's life. Returns whether it worked.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The machine's load averages (1, 5, 15 minutes), as a figure's context. */
export function loadText(): string {
  return os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');
}
