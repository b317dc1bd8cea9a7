import type { Metric, Registry } from 'prom-client';

/** One label set's observations: a count per bucket (not cumulative), their sum and count. */
export interface Series {
  readonly labels: Readonly<Record<string, string>>;
  counts: number[];
  sum: number;
  count: number;
}

export interface SummedHistogramOptions {
  name: string;
  help: string;
  buckets: readonly number[];
  registry: Registry;
}

type Value = {
  labels: Record<string, string | number>;
  sharedLabels: Readonly<Record<string, string>>;
  value: number;
  metricName: string;
};

/**
 * A histogram on the request path that adds an observation to its label set's counts and nothing
 * else; prom-client's exposition (the same lines as its Histogram: cumulative `_bucket`s with `le`,
 * `+Inf`, `_sum`, `_count`) is built from them at scrape time. prom-client's `observe` checked and
 * hashed the label object again on every call (~3 µs each, three a request, issue 38).
 */
export function createSummedHistogram({ name, help, buckets, registry }: SummedHistogramOptions) {
  const bounds = [...buckets];
  let all = new Map<string, Series>();

  const valuesOf = (series: Series): Value[] => {
    const values: Value[] = [];
    let cumulative = 0;
    bounds.forEach((bound, index) => {
      cumulative += series.counts[index] ?? 0;
      values.push({
        labels: { le: bound },
        sharedLabels: series.labels,
        value: cumulative,
        metricName: `${name}_bucket`,
      });
    });
    const { labels: sharedLabels } = series;
    values.push(
      { labels: { le: '+Inf' }, sharedLabels, value: series.count, metricName: `${name}_bucket` },
      { labels: {}, sharedLabels, value: series.sum, metricName: `${name}_sum` },
      { labels: {}, sharedLabels, value: series.count, metricName: `${name}_count` },
    );
    return values;
  };
  const getForPromString = () =>
    Promise.resolve({
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      values: [...all.values()].flatMap(valuesOf),
    });
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    getForPromString,
    // As prom-client's get(): each value's labels with its series' labels merged in.
    get: () =>
      getForPromString().then((data) => ({
        ...data,
        values: data.values.map(({ labels, sharedLabels, value, metricName }) => ({
          labels: { ...labels, ...sharedLabels },
          value,
          metricName,
        })),
      })),
    reset: () => {
      all = new Map();
    },
  };
  registry.registerMetric(metric as unknown as Metric);

  return {
    /**
     * Adds `value` to the series `key` names (a key the caller makes unique per label set, e.g. the
     * values joined); `labels` is asked for only when that series is new.
     */
    observe(key: string, value: number, labels: () => Record<string, string>): void {
      let series = all.get(key);
      if (series === undefined) {
        series = { labels: labels(), counts: bounds.map(() => 0), sum: 0, count: 0 };
        all.set(key, series);
      }
      let index = 0;
      while (index < bounds.length && value > (bounds[index] as number)) index++;
      if (index < bounds.length) series.counts[index] = (series.counts[index] ?? 0) + 1;
      series.sum += value;
      series.count += 1;
    },
  };
}

export type SummedHistogram = ReturnType<typeof createSummedHistogram>;
