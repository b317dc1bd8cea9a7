import type { LiveOrderRequest, LiveOrders } from '../db/orders/live-orders';
import type { LiveOrderStream } from '../db/orders/live-order-stream';
import { createLiveStreamOwners } from '../http/use-live-stream-owners';
import { createAddressKey } from './client-key';
import type { FleetSlots } from './live-fleet-slots';
import { tooManySubscriptions } from '../errors';
import type { Plugin } from 'graphql-yoga';
import type { Edge } from '../http/router';

export interface LiveStreams {
  /** Opens a stream within the hub's bounds, owned by the request that asked for it. */
  open(request: Request, serverContext: unknown, live: LiveOrderRequest): Promise<LiveOrderStream>;
  /** Gives back what requests own (src/http/use-live-stream-owners.ts): a plugin and a router edge. */
  plugin: Plugin;
  edge: Edge;
}

/** The live orders hub (src/db/orders/live-orders.ts) as the GraphQL subscriptions meet it. */
export function createLiveStreams(
  hub: LiveOrders,
  { trustedProxies, fleet }: { trustedProxies: string[]; fleet?: FleetSlots },
): LiveStreams {
  const owners = createLiveStreamOwners();
  const addressOf = createAddressKey(trustedProxies);
  return {
    plugin: owners.plugin,
    edge: owners.edge,
    async open(request, serverContext, live) {
      const taken = fleet && (await fleet.acquire(live.customerId));
      if (fleet && taken === 'full') throw fleetFull(fleet.perCustomer);
      const slot = taken === 'full' ? undefined : taken;
      let stream: LiveOrderStream;
      try {
        stream = hub.open({ ...live, address: addressOf(request, serverContext), onEnd: slot });
      } catch (error) {
        slot?.();
        throw error;
      }
      owners.own(request, stream, serverContext);
      return stream;
    },
  };
}

function fleetFull(perCustomer: number) {
  return tooManySubscriptions(
    `At most ${perCustomer} live subscriptions per customer may be open at once, on all servers together: end one first.`,
  );
}
