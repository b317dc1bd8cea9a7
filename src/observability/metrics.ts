import type { Plugin } from 'graphql-yoga';
import type { QueryObserver } from '../db/guards/instrumented';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { Response } from '../http/fetch-api';
import type { Edge } from '../http/router';
import { METRICS_PATH } from '../http/use-metrics-access';
import type { CountReason } from '../db/catalog/total-cache';
import { useOperationMetrics, type OperationLabels } from './operation-metrics';
import { createSummedHistogram } from './summed-histogram';

export interface Metrics {
  registry: Registry;
  /** One HTTP request's duration, by route (REST route template, /graphql, …), method and status. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  cacheLookups: Counter<'result'>;
  /** Stored documents left out of an answer because they cannot be read (src/db/document-reading.ts). */
  unreadableDocuments: Counter<'collection'>;
  /** A hinted index found missing, and each attempt to create it again (src/db/guards/index-keeper.ts). */
  indexEvents: Counter<'index' | 'outcome'>;
  /** Searches that read every product instead of the grams, by why (src/db/catalog/product-search.ts). */
  searchScans: Counter<'reason'>;
  /** Work refused to keep the process within a bound, by which bound (e.g. `response-bytes`). */
  refusals: Counter<'reason'>;
  /** Feeds the database latency histogram; give it to `instrumented` repositories. */
  observeQuery: QueryObserver;
  /** GraphQL per-operation metrics (parse/validate/execute, errors). */
  plugin: Plugin;
  /** The /metrics endpoint; behind metricsAccessEdge (src/http/use-metrics-access.ts). */
  edge: Edge;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The operationName label of a request with no name, and of one whose name the server does not know. */
const ANONYMOUS_OPERATION = 'anonymous';
const OTHER_OPERATION = 'other';

/**
 * Labels come from a fixed set, never from the client: a unique operationName per request (or an
 * error's `path`, one per aliased `nodes` entry) was a new series each, kept for the process's life.
 */
function operationLabels(knownNames: ReadonlySet<string>) {
  return ({
    operationName,
    operationType,
  }: {
    operationName?: string;
    operationType?: string;
  }): OperationLabels => ({
    operationName:
      operationName === undefined || operationName === 'Anonymous'
        ? ANONYMOUS_OPERATION
        : knownNames.has(operationName)
          ? operationName
          : OTHER_OPERATION,
    operationType: operationType ?? 'unknown',
  });
}

/**
 * One registry per app instance, so several apps (tests) in one process never collide.
 * `operationNames`: the names the operationName label may carry (the persisted documents'); any
 * other is counted as "other".
 */
export function createMetrics({
  operationNames,
  externalRefusals,
}: {
  operationNames: ReadonlySet<string>;
  /** Running totals of refusals counted elsewhere, by reason. */
  externalRefusals?: () => Readonly<Record<string, number>>;
}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const httpDuration = createSummedHistogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by route (REST route template, /graphql, …), method and status.',
    buckets: LATENCY_BUCKETS,
    registry,
  });
  const observeRequest = (method: string, route: string, status: number, seconds: number) =>
    httpDuration.observe(`${method} ${status} ${route}`, seconds, () => ({
      method,
      route,
      status: String(status),
    }));

  const cacheLookups = new Counter({
    name: 'response_cache_lookups_total',
    help: 'Response cache lookups by result (hit or miss).',
    labelNames: ['result'] as const,
    registers: [registry],
  });

  const unreadableDocuments = new Counter({
    name: 'documents_unreadable_total',
    help: 'Stored documents left out of an answer because a field is in no accepted shape (see the log).',
    labelNames: ['collection'] as const,
    registers: [registry],
  });
  const indexEvents = new Counter({
    name: 'mongodb_index_events_total',
    help: 'Indexes that reads name found missing (outcome "missing"), then "restored" or "restore_failed".',
    labelNames: ['index', 'outcome'] as const,
    registers: [registry],
  });
  const searchScans = new Counter({
    name: 'product_search_scans_total',
    help: 'Searches that tested every product by regex instead of reading the grams, by reason: short_words, unindexed, feed_behind.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Refusals counted outside the app (the connection caps, before any request) are added at each scrape.
  const seen = new Map<string, number>();
  const refusals = new Counter({
    name: 'bounded_refusals_total',
    help: 'Requests, connections or answers refused to keep the process within a bound, by bound.',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      for (const [reason, total] of Object.entries(externalRefusals?.() ?? {})) {
        const delta = total - (seen.get(reason) ?? 0);
        if (delta > 0) this.inc({ reason }, delta);
        seen.set(reason, total);
      }
    },
  });

  const dbDuration = createSummedHistogram({
    name: 'mongodb_query_duration_seconds',
    help: 'Database round trips by repository query (e.g. products.findPage) and outcome.',
    buckets: LATENCY_BUCKETS,
    registry,
  });
  const observeQuery: QueryObserver = (query, seconds, outcome) =>
    dbDuration.observe(`${outcome} ${query}`, seconds, () => ({ query, outcome }));

  const labelsOf = operationLabels(operationNames);
  // Per operation: execution time, executions and errors. Parse and validate are cached by Yoga
  // (near zero after an operation's first request) and the request duration is
  // http_request_duration_seconds: their histograms said nothing new.
  const plugin = useOperationMetrics({ registry, labelsOf });
  // Serves the registry; metricsAccessEdge, placed before it, decides who may read it.
  const serve = () =>
    registry
      .metrics()
      .then((text) => new Response(text, { headers: { 'content-type': registry.contentType } }));
  const edge: Edge = { routes: { paths: { [METRICS_PATH]: serve } } };

  return {
    registry,
    observeRequest,
    cacheLookups,
    unreadableDocuments,
    indexEvents,
    searchScans,
    refusals,
    observeQuery,
    plugin,
    edge,
  };
}

/**
 * Products without current search grams, counted at each scrape (three index probes). The change
 * feed gives grams to what it sees within a second; what it cannot see (no date in `updated_at`)
 * is scanned for by every search until `npm run search:index` brings it to zero.
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

/** How far each change feed is behind its collection, read at each scrape (src/db/change-feed.ts). */
export function registerFeedLagGauge(
  registry: Registry,
  feeds: readonly { collection: string; lagSeconds(): number }[],
): void {
  new Gauge({
    name: 'change_feed_lag_seconds',
    help: 'Seconds a change feed is behind its collection (0 right after a read that caught up).',
    labelNames: ['collection'] as const,
    registers: [registry],
    collect() {
      for (const feed of feeds) this.set({ collection: feed.collection }, feed.lagSeconds());
    },
  });
}

/** Live order subscriptions open on this instance (its bound: LIVE_SUBSCRIPTIONS_PER_INSTANCE). */
/** The log feed's slot: lost, resynced, abandoned ones dropped (counts since start), and whether this instance leads. */
export function registerLogFeedMetrics(
  registry: Registry,
  events: { slotsLost: number; resyncs: number; slotsDropped: number; leading(): boolean },
): void {
  new Gauge({
    name: 'change_feed_log_events',
    help: "The log feed's lasting slots since start: event=slot_lost (invalidated or gone), resync (derived state rebuilt), abandoned_slot_dropped (another database's, unserved for CHANGE_FEED_SLOT_ABANDON_HOURS)",
    labelNames: ['event'],
    registers: [registry],
    collect() {
      this.set({ event: 'slot_lost' }, events.slotsLost);
      this.set({ event: 'resync' }, events.resyncs);
      this.set({ event: 'abandoned_slot_dropped' }, events.slotsDropped);
    },
  });
  new Gauge({
    name: 'change_feed_log_leading',
    help: "1 where this instance holds the log's lasting slot and writes the derived state for the fleet",
    registers: [registry],
    collect() {
      this.set(events.leading() ? 1 : 0);
    },
  });
}

export function registerLiveSubscriptionsGauge(registry: Registry, count: () => number): void {
  new Gauge({
    name: 'live_subscriptions',
    help: 'Live order subscriptions (GraphQL over SSE) open on this instance.',
    registers: [registry],
    collect() {
      this.set(count());
    },
  });
}

/**
 * Kept totals (and counts by group) counted, by why (src/db/catalog/total-cache.ts, CountReason): `first`
 * (never kept), `write` (a change it could not be moved by for sure dropped it), `counting` (a
 * change came while it was being counted), `evicted`, `not_current` (the feed was behind the
 * request, so it counted without them). Moved totals are not counted.
 */
export function registerTotalCounts(
  registry: Registry,
  counts: () => Readonly<Record<CountReason, number>>,
): void {
  const seen: Record<string, number> = {};
  new Counter({
    name: 'kept_totals_counted_total',
    help: 'Totals of product filters and counts by group counted in the database, by reason: first, write, counting, evicted, not_current.',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      for (const [reason, count] of Object.entries(counts())) {
        this.inc({ reason }, count - (seen[reason] ?? 0));
        seen[reason] = count;
      }
    },
  });
}

/** The shared store's circuit: open (Redis skipped after repeated timeouts) and how often it opened. */
export function registerRedisCircuit(
  registry: Registry,
  redis: { isReady(): boolean; circuitTrips(): number },
) {
  let seen = 0;
  new Counter({
    name: 'redis_circuit_trips_total',
    help: 'Times this process began skipping Redis after repeated command timeouts.',
    registers: [registry],
    collect() {
      const trips = redis.circuitTrips();
      if (trips > seen) this.inc(trips - seen);
      seen = trips;
    },
  });
  new Gauge({
    name: 'redis_available',
    help: '1 while Redis is connected and answering, 0 while this process goes without it.',
    registers: [registry],
    collect() {
      this.set(redis.isReady() ? 1 : 0);
    },
  });
}
