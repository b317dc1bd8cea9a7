import { describe, expect, it } from 'vitest';
import { createSingleFlight } from '../src/single-flight';

describe('single flight', () => {
  it('runs concurrent calls of one key once, and the next call after it anew', async () => {
    const flights = createSingleFlight<number>();
    let runs = 0;
    const work = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return runs;
    };
    const results = await Promise.all(Array.from({ length: 20 }, () => flights.run('page', undefined, work)));
    expect(results).toEqual(Array(20).fill(1));
    expect(flights.size()).toBe(0);
    expect(await flights.run('page', undefined, work)).toBe(2);
    expect(await flights.run('other', undefined, work)).toBe(3);
  });

  it('aborts the work only when every caller has gone', async () => {
    const flights = createSingleFlight<string>();
    let workSignal: AbortSignal | undefined;
    const work = (signal: AbortSignal) => {
      workSignal = signal;
      return new Promise<string>((resolve) => setTimeout(() => resolve('done'), 50));
    };
    const first = new AbortController();
    const second = new AbortController();
    const answers = [flights.run('page', first.signal, work), flights.run('page', second.signal, work)];
    first.abort();
    expect(workSignal?.aborted).toBe(false);
    second.abort();
    expect(workSignal?.aborted).toBe(true);
    expect(await Promise.all(answers)).toEqual(['done', 'done']);
  });
});
