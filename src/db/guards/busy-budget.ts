/**
 * How much of the time a lane may keep the database busy (src/db/guards/admission.ts): a bucket of
 * database milliseconds, `burstMs` deep, refilled at `share` of a millisecond per millisecond. A
 * call spends its duration; while the bucket is empty, new requests rest. So over any window the
 * lane holds at most `share` of a core, plus one burst: a lone client's occasional scan never
 * waits, a client asking without pause gets `share`.
 */
export function createBusyBudget(share: number, burstMs: number) {
  let credit = burstMs;
  let refilledAt = performance.now();
  const refill = () => {
    const now = performance.now();
    credit = Math.min(burstMs, credit + (now - refilledAt) * share);
    refilledAt = now;
  };
  return {
    spend(ms: number): void {
      if (share >= 1) return;
      refill();
      credit -= ms;
    },
    /** How long new requests must rest before the bucket holds credit again (0: none). */
    restMs(): number {
      if (share >= 1) return 0;
      refill();
      return credit >= 0 ? 0 : Math.ceil(-credit / share);
    },
  };
}
