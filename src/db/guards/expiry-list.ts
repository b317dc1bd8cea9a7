/** Something that must be stopped at `expiresAt` (performance.now() ms) unless it leaves first. */
export interface Expiring {
  expiresAt: number;
  expire(): void;
  /** The list's links: set and cleared by ExpiryList only. */
  previous: Expiring | undefined;
  next: Expiring | undefined;
  listed: boolean;
}

/**
 * Everything that can time out, in order of expiry, behind one timer armed for the first: a
 * database call adds itself and leaves when it settles, which costs two links, not a Node timer
 * made and cleared for each call (most calls settle long before their time). Calls are mostly
 * added in expiry order (each expires a fixed time after it starts), so adding walks back from the
 * end rarely more than a step.
 */
export function createExpiryList() {
  let first: Expiring | undefined;
  let last: Expiring | undefined;
  let timer: NodeJS.Timeout | undefined;
  let armedFor = Infinity;

  const arm = () => {
    if (first === undefined || first.expiresAt >= armedFor) return;
    clearTimeout(timer);
    armedFor = first.expiresAt;
    // Unref'd: a call in flight holds the process by its socket; an empty list must not.
    timer = setTimeout(fire, Math.max(0, armedFor - performance.now())).unref();
  };
  const fire = () => {
    timer = undefined;
    armedFor = Infinity;
    const now = performance.now();
    while (first !== undefined && first.expiresAt <= now) {
      const expired = first;
      remove(expired);
      expired.expire();
    }
    arm();
  };
  const remove = (item: Expiring) => {
    if (!item.listed) return;
    item.listed = false;
    if (item.previous) item.previous.next = item.next;
    else first = item.next;
    if (item.next) item.next.previous = item.previous;
    else last = item.previous;
    item.previous = item.next = undefined;
  };

  return {
    add(item: Expiring): void {
      let after = last;
      while (after !== undefined && after.expiresAt > item.expiresAt) after = after.previous;
      item.previous = after;
      item.next = after ? after.next : first;
      if (item.next) item.next.previous = item;
      else last = item;
      if (after) after.next = item;
      else first = item;
      item.listed = true;
      arm();
    },
    /** Takes the item out (it settled); the timer stays armed for its time and re-arms then. */
    remove,
  };
}

export type ExpiryList = ReturnType<typeof createExpiryList>;
