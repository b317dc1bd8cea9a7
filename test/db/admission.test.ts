import { describe, expect, it } from 'vitest';
import { createLane, DatabaseBusyError, type LaneLimits } from '../../src/db/guards/admission';

/** A call that runs until told to finish. */
/** A scan lane whose waits and slow mark are out of the way (10 s) unless a test sets them. */
function scanLane(limits: Pick<LaneLimits, 'concurrency' | 'queue'> & Partial<LaneLimits>) {
  return createLane('scan', { maxWaitMs: 10_000, giveUpMs: 10_000, slowMs: 10_000, ...limits });
}

function pending() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { done, finish };
}

describe('an admission lane', () => {
  it('runs `concurrency` calls at once, queues `queue` more, and refuses the next at once', async () => {
    const lane = scanLane({ concurrency: 2, queue: 1 });
    const calls = [pending(), pending(), pending()];
    const started: number[] = [];
    const runs = calls.map((call, index) =>
      lane.run(async () => {
        started.push(index);
        await call.done;
        return index;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(lane.load()).toEqual({ running: 2, waiting: 1, limit: 2 });

    const before = performance.now();
    await expect(lane.run(async () => 'never')).rejects.toBeInstanceOf(DatabaseBusyError);
    expect(performance.now() - before).toBeLessThan(50);

    calls[0]!.finish();
    await runs[0];
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    calls[1]!.finish();
    calls[2]!.finish();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(lane.load()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('refuses a call that waited giveUpMs, and drops one whose request was abandoned', async () => {
    const lane = scanLane({ concurrency: 1, queue: 5, maxWaitMs: 100, giveUpMs: 100 });
    const busy = pending();
    const running = lane.run(() => busy.done);
    const waited = lane.run(async () => 'late');
    const controller = new AbortController();
    const abandoned = lane.run(async () => 'ran', { signal: controller.signal });
    controller.abort(new Error('client gone'));
    await expect(abandoned).rejects.toThrow('client gone');
    expect(lane.load().waiting).toBe(1);
    await expect(waited).rejects.toBeInstanceOf(DatabaseBusyError);
    busy.finish();
    await running;
    expect(lane.load()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('frees the slot of a call that failed', async () => {
    const lane = scanLane({ concurrency: 1, queue: 0, maxWaitMs: 100, giveUpMs: 100 });
    await expect(lane.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lane.run(async () => 'next')).toBe('next');
  });

  it('halves how many run at once when calls are slow, and grows back when they are fast', async () => {
    const lane = scanLane({ concurrency: 8, queue: 0, maxWaitMs: 100, giveUpMs: 100, slowMs: 30 });
    const slow = () => new Promise((resolve) => setTimeout(resolve, 40));
    await Promise.all(Array.from({ length: 8 }, () => lane.run(slow)));
    expect(lane.load().limit).toBe(4);
    for (let call = 0; call < 40; call++) await lane.run(async () => undefined);
    expect(lane.load().limit).toBe(8);
  });

  it('lets calls of a request that has begun go first, even past a full queue', async () => {
    const lane = scanLane({ concurrency: 1, queue: 1 });
    const begun = {};
    const first = pending();
    const order: string[] = [];
    const running = lane.run(() => first.done, { request: begun });
    const fresh = lane.run(async () => order.push('new request'), { request: {} });
    const second = lane.run(async () => order.push('begun request'), { request: begun });
    await expect(lane.run(async () => 'never', { request: {} })).rejects.toBeInstanceOf(DatabaseBusyError);
    first.finish();
    await Promise.all([running, fresh, second]);
    expect(order).toEqual(['begun request', 'new request']);
  });

  it('refuses a new request at once when its expected wait is longer than maxWaitMs', async () => {
    const lane = scanLane({ concurrency: 1, queue: 100, maxWaitMs: 10 });
    await lane.run(() => new Promise((resolve) => setTimeout(resolve, 80)));
    const busy = pending();
    const running = lane.run(() => busy.done);
    await expect(lane.run(async () => 'never')).rejects.toBeInstanceOf(DatabaseBusyError);
    busy.finish();
    await running;
  });

  it('rests after a burst (busyShare): a new request waits the rest out, a begun one does not', async () => {
    const lane = scanLane({ concurrency: 1, queue: 5, maxWaitMs: 10_000, busyShare: 0.25 });
    const request = {};
    const call = () => new Promise<void>((resolve) => setTimeout(resolve, 100));
    const first = performance.now();
    await lane.run(call, { request });
    const firstMs = performance.now() - first;
    // The same request's next call (a page's count after its page) goes on at once.
    const begun = performance.now();
    await lane.run(async () => undefined, { request });
    expect(performance.now() - begun).toBeLessThan(firstMs);
    // A new request waits until the lane has rested three times its calls (busy a quarter of the time).
    const waited = performance.now();
    await lane.run(async () => undefined, { request: {} });
    expect(performance.now() - waited).toBeGreaterThan(firstMs * 2);

    // Within a burst, nobody rests: a lone client's occasional scan goes at once.
    const bursting = scanLane({ concurrency: 1, queue: 5, busyShare: 0.25, busyBurstMs: 1_000 });
    await bursting.run(call);
    const atOnce = performance.now();
    await bursting.run(async () => undefined, { request: {} });
    expect(performance.now() - atOnce).toBeLessThan(firstMs);

    // Refused at once when the rest is longer than the wait a new request may have.
    const strict = scanLane({ concurrency: 1, queue: 5, maxWaitMs: 50, busyShare: 0.25 });
    await strict.run(call);
    const refused = performance.now();
    await expect(strict.run(async () => 'never')).rejects.toBeInstanceOf(DatabaseBusyError);
    expect(performance.now() - refused).toBeLessThan(50);
    expect(strict.load()).toMatchObject({ running: 0, waiting: 0 });
  });
});
