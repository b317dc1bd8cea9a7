import type { ChildProcess } from 'node:child_process';
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
