export interface CircuitBreakerOptions {
  /** Timeouts in a row (no answer between them) that open the circuit. */
  failuresToOpen: number;
  /** How long the circuit stays open before a probe asks whether the dependency answers again. */
  coolDownMs: number;
  /** Resolves true when the dependency answers (within its own timeout). */
  probe: () => Promise<boolean>;
  onOpen: (failures: number) => void;
  onClose: () => void;
}

export interface CircuitBreaker {
  /** True while callers should skip the dependency. */
  isOpen(): boolean;
  /** How many times the circuit has opened. */
  readonly trips: number;
  failure(): void;
  success(): void;
  stop(): void;
}

/**
 * A circuit breaker per process: after `failuresToOpen` timeouts in a row, callers skip the
 * dependency at once (no request waits for a timeout) until a probe, every `coolDownMs`, gets an
 * answer. Only the probe tries the dependency meanwhile, so its recovery costs no request a wait.
 */
export function createCircuitBreaker({
  failuresToOpen,
  coolDownMs,
  probe,
  onOpen,
  onClose,
}: CircuitBreakerOptions): CircuitBreaker {
  let failures = 0;
  let open = false;
  let trips = 0;
  let timer: NodeJS.Timeout | undefined;

  const scheduleProbe = () => {
    timer = setTimeout(() => {
      void probe().then((answers) => {
        if (!open) return;
        if (!answers) return scheduleProbe();
        open = false;
        failures = 0;
        onClose();
      });
    }, coolDownMs);
    timer.unref();
  };

  return {
    isOpen: () => open,
    get trips() {
      return trips;
    },
    failure() {
      if (open || ++failures < failuresToOpen) return;
      open = true;
      trips += 1;
      onOpen(failures);
      scheduleProbe();
    },
    success() {
      if (!open) failures = 0;
    },
    stop() {
      clearTimeout(timer);
    },
  };
}
