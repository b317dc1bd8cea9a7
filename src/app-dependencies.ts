import type { Plugin } from 'graphql-yoga';
import type { Document } from 'mongodb';
import type { ViewerResolver } from './auth/tokens';
import type { Config } from './config';
import type { ChangeFeed } from './db/change-feed';
import type { TotalCache } from './db/catalog/total-cache';
import type { BeforeImages } from './db/derived/search-state';
import type { LogEvents } from './db/feed/open-feeds';
import type { Database } from './db/mongo';
import type { LiveOrders } from './db/orders/live-orders';
import type { Edge } from './http/router';
import type { RouteLabel } from './http/routes';
import type { Logger } from './logger';
import type { SharedRedis } from './store/redis';

export interface AppDependencies {
  config: Config;
  database: Database;
  resolveViewer: ViewerResolver;
  logger: Logger;
  /** True once shutdown has begun: /readyz then answers 503. */
  isDraining?: () => boolean;
  /** The fleet's shared store (REDIS_URL); absent: every cache and limit is per process. */
  redis?: SharedRedis;
  /** The database in words, for the start page; the process entry knows which it opened. */
  databaseDescription?: string;
  /** The live orders hub (src/db/orders/live-orders.ts); absent: subscriptions answer SERVICE_UNAVAILABLE. */
  liveOrders?: LiveOrders;
  /** The products change feed (src/db/change-feed.ts): search and caches follow it. */
  productFeed?: ChangeFeed<Document>;
  /** Totals the server drops on the feed's changes, and the before-images that adjust them (src/server.ts). */
  keptTotals?: { totals: TotalCache; beforeImages?: BeforeImages };
  /** What the log's slot went through, where the feed reads the engine's log (src/db/feed/open-feeds.ts). */
  logEvents?: LogEvents;
  /** Extra routes answered before the APIs, after the rate limits (e.g. the API docs). */
  edges?: Edge[];
  /** Extra plugins, after the rate limits' (bench/http-floor.ts). */
  plugins?: Plugin[];
  /** Set when OpenTelemetry tracing is on (src/observability/use-graphql-tracing.ts). */
  tracing?: AppTracing;
  /**
   * The HTTP server in front counts bodies as they arrive (src/http/node-guards.ts). Then Yoga's
   * own limit is off: it pipes every POST body through a stream transform (~10 % of a small
   * GraphQL request's CPU). Unset (yoga.fetch in-process), Yoga limits bodies itself.
   */
  bodiesLimitedUpstream?: boolean;
  /** Connections refused by the caps in front (src/limits/connection-caps.ts), for the metrics. */
  connectionRefusals?: () => Readonly<Record<string, number>>;
}

export interface AppTracing {
  /** The HTTP span's route name (by the route label given) and the GraphQL parse, validate and execute spans. */
  plugins: (routeLabel: RouteLabel) => { edge: Edge; plugins: Plugin[] };
  /** The trace id of the current request, for its log line. */
  traceId: () => string | undefined;
}
