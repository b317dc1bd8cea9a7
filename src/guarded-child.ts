import type { ChildProcess } from 'node:child_process';
import net from 'node:net';

/**
 * A small `sh` guard for a child server (the embedded FerretDB; test Redis servers): run as
 * `sh -c GUARD_SCRIPT <name> <binary> <args…>`, it stops the server when our stdin pipe closes, so
 * the server cannot outlive this process, even one killed with SIGKILL. fd 3 keeps our stdin for
 * the watcher, since a background job's stdin is /dev/null without job control.
 */
export const GUARD_SCRIPT = `
exec 3<&0
"$@" </dev/null &
server=$!
( while read -r _ <&3; do :; done; kill -TERM "$server" 2>/dev/null ) &
watcher=$!
trap 'kill -TERM "$server" 2>/dev/null' TERM INT
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
