import type { Viewer } from './auth/viewer';
import type { ViewerResolver } from './auth/tokens';
import type { LiveOrderRequest } from './db/orders/live-orders';
import type { LiveOrderStream } from './db/orders/live-order-stream';
import type { OrderRepository } from './db/orders/order-repository';
import type { ProductRepository } from './db/catalog/product-repository';
import { recordReads } from './db/catalog/read-tags';

/** Per-request context, shared by GraphQL resolvers and the REST adapter (which runs through them). */
export interface AppContext {
  /** Verified lazily: product reads never pay for token verification. */
  viewer(): Promise<Viewer>;
  /** Whether anything asked for the viewer: such a result depends on the caller (never cached). */
  viewerConsulted(): boolean;
  products: ProductRepository;
  orders: OrderRepository;
  /**
   * Opens a live order stream owned by this request (src/http/use-live-stream-owners.ts), within
   * the subscription bounds; absent where nothing follows the orders.
   */
  openLiveStream?: (live: LiveOrderRequest) => Promise<LiveOrderStream>;
  /** Locale of `localizedDecimal` / `localized_decimal`. */
  storeLocale: string;
  /**
   * Set by the /api/v1 adapter on its executions: its query schemas have validated the arguments
   * already (resolvers skip their own checks), and it caches finished pages itself.
   */
  restExecution?: true;
  /** What this request's product reads named, as cache tags (src/db/catalog/read-tags.ts). */
  readTags(): readonly string[];
}

export function isRestExecution(context: unknown): boolean {
  return (context as Partial<AppContext> | null)?.restExecution === true;
}

export interface ContextDependencies {
  /** The repositories bound to one request: its database work is dropped when its client leaves. */
  products: (signal?: AbortSignal) => ProductRepository;
  orders: (signal?: AbortSignal) => OrderRepository;
  resolveViewer: ViewerResolver;
  openLiveStream?: (
    request: Request,
    serverContext: unknown,
    live: LiveOrderRequest,
  ) => Promise<LiveOrderStream>;
  storeLocale: string;
}

/** What a request's context methods read: kept on the context under a symbol, as Yoga copies it. */
const STATE = Symbol('request context state');

interface RequestState {
  request: Request;
  serverContext: unknown;
  deps: ContextDependencies;
  viewer: Promise<Viewer> | undefined;
  tags: ReadonlySet<string>;
}

type WithState = AppContext & { [STATE]: RequestState };

/*
 * The methods are shared functions reading the request's state through `this`, not closures made
 * per request: Yoga assigns the context's own properties onto its own (so no prototype), and a
 * request made four closures here (~4 µs with the names tsx gives each, issue 38).
 */
function viewer(this: WithState): Promise<Viewer> {
  const state = this[STATE];
  return (state.viewer ??= state.deps.resolveViewer(state.request.headers.get('authorization')));
}

function viewerConsulted(this: WithState): boolean {
  return this[STATE].viewer !== undefined;
}

function readTags(this: WithState): readonly string[] {
  return [...this[STATE].tags];
}

function openLiveStream(this: WithState, live: LiveOrderRequest): Promise<LiveOrderStream> {
  const { deps, request, serverContext } = this[STATE];
  return (deps.openLiveStream as NonNullable<ContextDependencies['openLiveStream']>)(
    request,
    serverContext,
    live,
  );
}

export function createContext(
  request: Request,
  deps: ContextDependencies,
  serverContext?: unknown,
): AppContext {
  const products = recordReads(deps.products(request.signal));
  const context: WithState = {
    [STATE]: { request, serverContext, deps, viewer: undefined, tags: products.tags },
    viewer,
    viewerConsulted,
    products: products.products,
    readTags,
    orders: deps.orders(request.signal),
    storeLocale: deps.storeLocale,
  };
  if (deps.openLiveStream) context.openLiveStream = openLiveStream;
  return context;
}
