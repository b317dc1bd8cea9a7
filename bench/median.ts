/** The median of the finite values (the mean of the middle two for an even count); NaN when none. */
export function median(values: number[]): number {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The median time of `samples` runs of `run`, after two untimed ones. */
export async function medianTime(run: () => Promise<unknown>, samples: number): Promise<number> {
  await run();
  await run();
  const times: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return median(times);
}

/** The value at percentile `p` (0–100, nearest rank) of `values`; Infinity counts as the largest. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
