import { createHash } from 'node:crypto';
import { useResponseCache, type Cache } from '@envelop/response-cache';
import type { ExecutionResult } from 'graphql';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { AppContext } from './context';
import { JSON_CONTENT_TYPE, Response } from './http/fetch-api';
import type { Edge } from './http/router';
import { useHttpCaching } from './http/use-http-caching';
import { conditionalJsonResponse, etagOf } from './http/etag';
import type { SizedResult } from './http/use-response-limit';
import { decodeGlobalId } from './schema/global-id';
import type { CacheStore } from './store/response-store';
import { ANY_PRODUCT_TAG } from './db/catalog/read-tags';

export interface GraphqlResponseCacheOptions {
  ttlMs: number;
  store: CacheStore;
  /** Executions that keep their own cache (the /api/v1 pages). */
  skip: (context: unknown) => boolean;
  /** `Cache-Control` of shareable results. */
  publicCacheControl: string;
  /**
   * Answer stored results as their bytes before Yoga parses anything. Off when only trusted
   * documents may run: a stored result must not answer a document sent as text.
   */
  answerStoredBytes: boolean;
  onLookup: (result: 'hit' | 'miss') => void;
}

/**
 * Whole GraphQL results of public reads, shared by every caller (one key for all: `session` is
 * null), so a result is stored only if nothing in computing it asked who the caller is: an order,
 * or a `node` that turned out to be one (even a null one), never enters. The plugins, in order:
 * stored bytes answered before parsing (see storedBytesPlugin), HTTP caching headers from the
 * response cache's verdict (src/http/use-http-caching.ts), and envelop's response cache. Their
 * work on the answer is in `edges`, for the router (src/http/router.ts), in that order.
 */
export function graphqlResponseCachePlugins(options: GraphqlResponseCacheOptions): {
  plugins: Plugin[];
  edges: Edge[];
} {
  const { ttlMs, store, skip, publicCacheControl, answerStoredBytes, onLookup } = options;
  // Keys the bytes path already looked up and missed for a request: envelop's lookup of the same
  // key would be a second store round trip for nothing (every uncacheable order query).
  const missed = new WeakMap<Request, string>();
  const flights = createResultFlights();
  const httpCaching = useHttpCaching({ publicCacheControl });
  const plugins = [
    ...(answerStoredBytes
      ? [storedBytesPlugin({ store, publicCacheControl, missed, flights, onHit: () => onLookup('hit') })]
      : []),
    httpCaching.plugin,
    useResponseCache({
      session: () => null,
      // The request's own text, so the bytes path finds an entry before anything is parsed.
      buildResponseCacheKey: ({ documentString, operationName, variableValues, context }) =>
        resultKeyOf(
          (context as { params?: GraphQLParams }).params ?? {
            query: documentString,
            operationName: operationName ?? undefined,
            variables: variableValues ?? undefined,
          },
        ),
      enabled: (context) => !skip(context),
      cache: (context) =>
        storedResultCache(
          store,
          onLookup,
          (key) => {
            const request = (context as { request?: Request }).request;
            return request !== undefined && missed.get(request) === key;
          },
          flights.stored,
          () => (context as Partial<AppContext>).readTags?.() ?? [],
        ),
      ttl: ttlMs,
      // Type names are schema coordinates too: nothing holding an order is ever stored.
      ttlPerSchemaCoordinate: { Order: 0, OrderItem: 0 },
      onTtl: ({ ttl, context }) => (((context as Partial<AppContext>).viewerConsulted?.() ?? true) ? 0 : ttl),
      includeExtensionMetadata: true,
      // The default also says so on the console for every 401/403/422.
      shouldCacheResult: ({ result }) => !result.errors?.length,
    }) as Plugin,
  ];
  // A request's flight ends with its answer (whether or not the bytes path ran for it).
  const finished: Edge = {
    onResponse(request) {
      flights.finished(request);
    },
  };
  return { plugins, edges: [...(answerStoredBytes ? [finished] : []), httpCaching.edge] };
}

const PRODUCT_TYPES = new Set(['Product', 'Variant']);

/** "product:7" for a Product entity, "variant:3" for a Variant: the tags a purge names. */
function tagOf(entity: { typename: string; id?: string | number }): string[] {
  // A product the answer holds without its id is still purged when a product changes.
  if (entity.id === undefined) return PRODUCT_TYPES.has(entity.typename) ? [ANY_PRODUCT_TAG] : [];
  try {
    const { typename, id } = decodeGlobalId(String(entity.id));
    return [`${typename.toLowerCase()}:${id}`];
  } catch {
    return [];
  }
}

/**
 * This schema has no mutations: entries expire, or a change purges them (src/store/response-store.ts,
 * purgeOnChange), or a purge (scripts/cache-purge.ts) drops them. One per request's context: the
 * lookup takes the purge sequence before the operation reads anything, and the result is stored
 * (and handed to the requests waiting for it) only if no change its tags can show was purged since.
 */
function storedResultCache(
  store: CacheStore,
  onLookup: (result: 'hit' | 'miss') => void,
  knownMiss: (key: string) => boolean,
  onStored: (key: string, json: string) => void,
  readTags: () => readonly string[],
): Cache {
  // By key: the operations of a batch may share one context.
  const since = new Map<string, number>();
  return {
    async get(key) {
      const stored = knownMiss(key) ? undefined : await store.get(key);
      if (!since.has(key)) since.set(key, store.since());
      onLookup(stored ? 'hit' : 'miss');
      return stored ? (JSON.parse(stored) as ExecutionResult) : undefined;
    },
    set(key, result, entities, ttl) {
      // The entities it holds, and what it read: filters it listed or counted, ids it asked for.
      const tags = [...new Set([...[...entities].flatMap(tagOf), ...readTags()])];
      const json = JSON.stringify(result);
      const began = since.get(key);
      // Not stored: the requests waiting for this flight run on their own when it finishes.
      if (began !== undefined && store.set(key, json, ttl, tags, began)) onStored(key, json);
    },
    invalidate: () => undefined,
  };
}

/** What the first of concurrent misses of one key ended with, told to the others waiting. */
type FlightOutcome = { stored: string } | 'uncacheable' | 'abandoned';

/**
 * Single flight for stored results: the first request that misses a key runs it; the others
 * that miss the same key meanwhile wait for it, and answer its stored result as a hit. A result
 * that is not stored (errors, or it consulted the viewer) lets them run on their own, at once;
 * one whose client left hands the run to the next of them. Only keys in flight are held.
 *
 * Not src/single-flight.ts, the REST pages' flights: there the work is a function the first caller
 * runs and every caller awaits its value, and it is aborted once all of them have left. Here the
 * work is the leader's own trip through Yoga's pipeline (parse … execute … the cache's `set`),
 * which no function call wraps: it is settled from hooks, and a leader whose client leaves hands
 * the run to a waiter rather than failing everyone who waits.
 */
function createResultFlights() {
  interface Flight {
    key: string;
    done: Promise<FlightOutcome>;
    settle: (outcome: FlightOutcome) => void;
  }
  const flights = new Map<string, Flight>();
  const leaders = new WeakMap<Request, Flight>();
  const settle = (flight: Flight | undefined, outcome: FlightOutcome) => {
    if (!flight || flights.get(flight.key) !== flight) return;
    flights.delete(flight.key);
    flight.settle(outcome);
  };
  return {
    /** Leads a new flight for `key` (undefined), or the one in flight to wait for. */
    join(key: string, request: Request): Promise<FlightOutcome> | undefined {
      const inFlight = flights.get(key);
      if (inFlight) return inFlight.done;
      let resolve!: (outcome: FlightOutcome) => void;
      const done = new Promise<FlightOutcome>((settled) => (resolve = settled));
      const flight: Flight = { key, done, settle: resolve };
      flights.set(key, flight);
      leaders.set(request, flight);
      // A response abandoned half-way may never reach onResponse.
      request.signal.addEventListener('abort', () => settle(flight, 'abandoned'), { once: true });
      return undefined;
    },
    stored: (key: string, json: string) => settle(flights.get(key), { stored: json }),
    /** The leader's response is done: whatever was not stored by now never will be. */
    finished(request: Request) {
      settle(leaders.get(request), request.signal.aborted ? 'abandoned' : 'uncacheable');
    },
  };
}

type ResultFlights = ReturnType<typeof createResultFlights>;

/** What a waiting request does: the flight's outcome, or (its client gone) run, to be dropped. */
function outcomeFor(flight: Promise<FlightOutcome>, signal: AbortSignal): Promise<FlightOutcome> {
  if (signal.aborted) return Promise.resolve('uncacheable');
  return new Promise<FlightOutcome>((resolve) => {
    const onAbort = () => resolve('uncacheable');
    signal.addEventListener('abort', onAbort, { once: true });
    void flight.then((outcome) => {
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    });
  });
}

/** The store key of a request's result: its document text, operation name and variables as sent. */
function resultKeyOf({ query, operationName, variables }: GraphQLParams): string {
  const text = `${query ?? ''}|${operationName ?? ''}|${JSON.stringify(variables ?? {})}`;
  return `gql:${createHash('sha256').update(text).digest('base64url')}`;
}

/** Only plain JSON clients: another media type (or APQ's extensions) takes the normal path. */
function plainJsonRequest(request: Request, params: GraphQLParams): boolean {
  if (!params.query || params.extensions !== undefined) return false;
  const accept = request.headers.get('accept');
  return accept === null || /^\s*(\*\/\*|application\/json)\s*(;[^,]*)?$/i.test(accept);
}

/**
 * A stored result answers as the stored bytes, before Yoga parses, validates, builds a context,
 * executes or serialises anything: the store held the finished JSON all along. Only stored
 * (public, error-free) results exist, and only for documents that passed every limit when they
 * ran. The request limit still counts the request (onRequest runs first); the cost budget is not
 * charged for a hit, which costs the server nothing of what the budget meters.
 */
function storedBytesPlugin({
  store,
  publicCacheControl,
  missed,
  flights,
  onHit,
}: {
  store: CacheStore;
  publicCacheControl: string;
  missed: WeakMap<Request, string>;
  flights: ResultFlights;
  onHit: () => void;
}): Plugin {
  // The stand-in result of a hit. Serialised by anyone else (a batch), it is the stored result.
  const hits = new WeakMap<object, string>();
  const headers = { 'x-cache': 'HIT', 'cache-control': publicCacheControl, vary: 'Accept, Accept-Encoding' };
  return {
    onParams({ params, request, setResult }) {
      if (!plainJsonRequest(request, params)) return;
      const key = resultKeyOf(params);
      const answer = (stored: string) => {
        onHit();
        const hit: SizedResult & { toJSON(): unknown } = {
          toJSON: () => JSON.parse(stored) as unknown,
          jsonLength: stored.length,
        };
        hits.set(hit, stored);
        setResult(hit as ExecutionResult);
      };
      const lookUp = async (): Promise<void> => {
        const stored = await store.get(key);
        if (stored !== undefined) return answer(stored);
        const flight = flights.join(key, request);
        if (!flight) {
          missed.set(request, key);
          return;
        }
        const outcome = await outcomeFor(flight, request.signal);
        if (outcome === 'abandoned') return lookUp();
        if (outcome === 'uncacheable') missed.set(request, key);
        else answer(outcome.stored);
      };
      return lookUp();
    },
    onResultProcess({ request, result, setResultProcessor }) {
      // A batch of hits only: their stored JSON joined, never parsed and serialised again.
      if (Array.isArray(result)) {
        const items = result.map((item) => hits.get(item as object));
        if (items.length === 0 || items.some((item) => item === undefined)) return;
        const body = `[${items.join(',')}]`;
        setResultProcessor(
          () => new Response(body, { headers: { 'content-type': JSON_CONTENT_TYPE, ...headers } }),
          'application/json',
        );
        return;
      }
      const stored = hits.get(result as object);
      if (!stored) return;
      setResultProcessor(
        () =>
          request.method === 'GET'
            ? conditionalJsonResponse(
                { body: stored, etag: etagOf(stored) },
                request.headers.get('if-none-match'),
                headers,
              )
            : new Response(stored, { headers: { 'content-type': JSON_CONTENT_TYPE, ...headers } }),
        'application/json',
      );
    },
  };
}
