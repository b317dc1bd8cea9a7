interface Flight<V> {
  promise: Promise<V>;
  /** Callers still waiting; the work is abandoned when the last of them has gone. */
  waiting: number;
  controller: AbortController;
}

/**
 * Concurrent calls with one key share one run of the work (a cache miss fills once, however many
 * clients asked at the same moment). The work's signal aborts only when every caller's has: one
 * client leaving does not fail the others. Only keys in flight are held.
 */
export function createSingleFlight<V>() {
  const flights = new Map<string, Flight<V>>();

  return {
    run(key: string, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<V>): Promise<V> {
      let flight = flights.get(key);
      if (!flight) {
        const controller = new AbortController();
        const started: Flight<V> = { controller, waiting: 0, promise: work(controller.signal) };
        started.promise
          .finally(() => {
            if (flights.get(key) === started) flights.delete(key);
          })
          .catch(() => undefined);
        flights.set(key, started);
        flight = started;
      }
      const joined = flight;
      joined.waiting++;
      if (!signal) return joined.promise;
      const leave = () => {
        if (--joined.waiting === 0) joined.controller.abort(signal.reason);
      };
      if (signal.aborted) leave();
      else signal.addEventListener('abort', leave, { once: true });
      return joined.promise.finally(() => signal.removeEventListener('abort', leave));
    },
    /** Keys in flight now (tests). */
    size: () => flights.size,
  };
}
