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

export function createContext(
  request: Request,
  deps: ContextDependencies,
  serverContext?: unknown,
): AppContext {
  const { openLiveStream } = deps;
  let viewer: Promise<Viewer> | undefined;
  const products = recordReads(deps.products(request.signal));
  return {
    viewer: () => (viewer ??= deps.resolveViewer(request.headers.get('authorization'))),
    viewerConsulted: () => viewer !== undefined,
    products: products.products,
    readTags: () => [...products.tags],
    orders: deps.orders(request.signal),
    openLiveStream: openLiveStream && ((live) => openLiveStream(request, serverContext, live)),
    storeLocale: deps.storeLocale,
  };
}
