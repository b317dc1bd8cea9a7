import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import type { Plugin } from 'graphql-yoga';
import type { QueryObserver } from '../db/instrumented';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  cacheLookups: Counter<'result'>;
  /** Feeds the database latency histogram; give it to `instrumented` repositories. */
  observeQuery: QueryObserver;
  /** GraphQL per-operation metrics (parse/validate/execute, errors) and the /metrics endpoint. */
  plugin: Plugin;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One registry per app instance, so several apps (tests) in one process never collide. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by route (REST route template, /graphql, …), method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });

  const cacheLookups = new Counter({
    name: 'response_cache_lookups_total',
    help: 'Response cache lookups by result (hit or miss).',
    labelNames: ['result'] as const,
    registers: [registry],
  });

  const dbDuration = new Histogram({
    name: 'mongodb_query_duration_seconds',
    help: 'Database round trips by repository query (e.g. products.findPage) and outcome.',
    labelNames: ['query', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const observeQuery: QueryObserver = (query, seconds, outcome) =>
    dbDuration.observe({ query, outcome }, seconds);

  const plugin = usePrometheus({
    registry,
    endpoint: '/metrics',
    // Per operation: execution time and errors. Parse and validate are cached by Yoga (near zero
    // after an operation's first request) and the request duration is http_request_duration_seconds:
    // their three histograms cost ~10 % of a small GraphQL request's CPU and said nothing new.
    metrics: {
      graphql_envelop_request_duration: false,
      graphql_envelop_phase_parse: false,
      graphql_envelop_phase_validate: false,
      graphql_envelop_phase_execute: true,
      graphql_envelop_error_result: true,
      graphql_yoga_http_duration: false,
      graphql_envelop_request_time_summary: false,
      graphql_envelop_phase_context: false,
      graphql_envelop_phase_subscribe: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
    },
  });

  return { registry, httpDuration, cacheLookups, observeQuery, plugin };
}

/**
 * Products without current search grams, counted at each scrape (three index probes). While it is
 * above zero, searches scan every product; `npm run search:index` brings it to zero.
 */
export function registerUnindexedGauge(registry: Registry, count: () => Promise<number>): void {
  new Gauge({
    name: 'products_without_search_grams',
    help: 'Products whose search grams are missing or stale (npm run search:index writes them).',
    registers: [registry],
    async collect() {
      // A scrape during an outage still answers; the gauge then keeps its last value.
      const value = await count().catch(() => undefined);
      if (value !== undefined) this.set(value);
    },
  });
}
