/**
 * One run of `check` shared by every caller that asked while the run before it was out, never
 * joined once started: a caller only gets an answer read after it asked, so a write it saw (or
 * made) before asking is never missed. Under load one read answers many requests (issue 29: the
 * change feed's "anything unhandled?" was one read per product page); alone, a caller waits for
 * nothing but its own read.
 */
export function freshCheck<T>(check: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  /** The run after `running`, for everyone who asked while it was out. */
  let queued: Promise<T> | undefined;

  function start(): Promise<T> {
    const run = check();
    running = run;
    const settle = () => {
      if (running === run) running = undefined;
    };
    run.then(settle, settle);
    return run;
  }

  // A run someone started since is as fresh for the queued callers: they asked before it began.
  const next = () => {
    queued = undefined;
    return running ?? start();
  };

  return () => {
    if (!running) return start();
    queued ??= running.then(next, next);
    return queued;
  };
}
