import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import net from 'node:net';

/**
 * A small `sh` guard for a child server (the embedded database's PostgreSQL and FerretDB; test
 * Redis servers): run as `sh -c GUARD_SCRIPT <name> <binary> <args…>`, it stops the server when
 * our stdin pipe closes or the guard gets SIGTERM/SIGINT, so the server cannot outlive this
 * process, even one killed with SIGKILL. It stops the server with SIGTERM, or with the signal named
 * in its environment's GUARD_STOP_SIGNAL (PostgreSQL's fast shutdown is SIGINT). fd 3 keeps our
 * stdin for the watcher, since a background job's stdin is /dev/null without job control. The trap
 * is set before the server starts, so a stop that arrives at once still reaches the server.
 */
export const GUARD_SCRIPT = `
exec 3<&0
stop="\${GUARD_STOP_SIGNAL:-TERM}"
server=
stopping=
trap 'stopping=1; [ -n "$server" ] && kill -"$stop" "$server" 2>/dev/null' TERM INT
"$@" </dev/null &
server=$!
[ -n "$stopping" ] && kill -"$stop" "$server" 2>/dev/null
( while read -r _ <&3; do :; done; kill -"$stop" "$server" 2>/dev/null ) &
watcher=$!
status=0
while kill -0 "$server" 2>/dev/null; do wait "$server"; status=$?; done
kill "$watcher" 2>/dev/null
exit $status
`;

/** A loopback port that was free a moment ago. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves true once the child has exited, or false after `timeoutMs`. */
export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** A server under the guard: its guard process, settling `exited`, and a stop that escalates to SIGKILL. */
export interface Guarded {
  child: ChildProcess;
  exited: Promise<void>;
  stop(timeoutMs: number): Promise<void>;
}

/**
 * Runs `binary args` under the guard, detached in its own process group, its output appended to
 * `logFile` by the child itself; as `user` when given; stopped with `stopSignal`.
 */
export function spawnGuarded(
  name: string,
  binary: string,
  args: string[],
  {
    logFile,
    env,
    user,
    stopSignal,
  }: { logFile: string; env: NodeJS.ProcessEnv; user?: { uid: number; gid: number }; stopSignal: string },
): Guarded {
  const output = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn('sh', ['-c', GUARD_SCRIPT, `${name}-guard`, binary, ...args], {
      env: { ...env, GUARD_STOP_SIGNAL: stopSignal },
      detached: true,
      stdio: ['pipe', output, output],
      ...user,
    });
  } finally {
    closeSync(output);
  }
  // The process group is ours to stop; do not keep Node alive for it.
  child.unref();
  (child.stdin as unknown as net.Socket | null)?.unref?.();
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  let stopping: Promise<void> | undefined;
  const stop = (timeoutMs: number): Promise<void> => {
    stopping ??= (async () => {
      child.stdin?.end();
      signalChild(child, 'SIGTERM', false);
      if (!(await waitForExit(child, timeoutMs))) {
        signalChild(child, 'SIGKILL', true);
        await waitForExit(child, 5_000);
      }
    })();
    return stopping;
  };
  return { child, exited, stop };
}

export function signalChild(child: ChildProcess, name: NodeJS.Signals, wholeGroup: boolean): void {
  if (child.pid === undefined) return;
  try {
    process.kill(wholeGroup ? -child.pid : child.pid, name);
  } catch {
    // already gone
  }
}

export function hasExited({ child }: Guarded): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}
