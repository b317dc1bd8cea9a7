import type { LiveOrderRequest, LiveOrders } from './db/live-orders';
import type { LiveOrderStream } from './db/live-order-stream';
import { createLiveStreamOwners } from './http/use-live-stream-owners';
import { createAddressKey } from './limits/client-key';
import type { Plugin } from 'graphql-yoga';

export interface LiveStreams {
  /** Opens a stream within the hub's bounds, owned by the request that asked for it. */
  open(request: Request, serverContext: unknown, live: LiveOrderRequest): Promise<LiveOrderStream>;
  /** Gives back what requests own (src/http/use-live-stream-owners.ts). */
  plugin: Plugin;
}

/** The live orders hub (src/db/live-orders.ts) as the GraphQL subscriptions meet it. */
export function createLiveStreams(
  hub: LiveOrders,
  { trustedProxies }: { trustedProxies: string[] },
): LiveStreams {
  const owners = createLiveStreamOwners();
  const addressOf = createAddressKey(trustedProxies);
  return {
    plugin: owners.plugin,
    async open(request, serverContext, live) {
      const stream = hub.open({ ...live, address: addressOf(request, serverContext) });
      owners.own(request, stream, serverContext);
      return stream;
    },
  };
}
