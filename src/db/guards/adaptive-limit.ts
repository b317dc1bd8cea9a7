/**
 * How many calls of a lane may run at once, adapting (additive increase, multiplicative decrease):
 * a call slower than `slowMs` halves it (once per `slowMs`), a fast one raises it by 1/limit up to
 * `concurrency`. More concurrent scans than the database can serve only make each slower, until
 * all of them miss the deadline and nothing at all succeeds. Beside it, the moving average of a
 * call's time, for the expected wait; from 0, so the slow first calls of a cold start
 * (connections being opened) do not refuse the burst that follows.
 */
export function createAdaptiveLimit(concurrency: number, slowMs: number) {
  let limit = concurrency;
  let lastDecrease = -Infinity;
  let callMs = 0;
  return {
    /** Calls that may run at once now. */
    slots: () => Math.floor(limit),
    /** The recent time of a call, ms. */
    callMs: () => callMs,
    observe(ms: number, ok: boolean): void {
      callMs += (ms - callMs) / 5;
      const now = performance.now();
      if (ms >= slowMs) {
        if (now - lastDecrease < slowMs) return;
        lastDecrease = now;
        limit = Math.max(1, limit / 2);
      } else if (ok && ms < slowMs / 2) limit = Math.min(concurrency, limit + 1 / limit);
    },
  };
}
