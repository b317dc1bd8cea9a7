import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ViewerResolver } from '../auth/tokens';
import type { Viewer } from '../auth/viewer';

/**
 * Who a request is counted against: `sub:<token subject>` or `ip:<client address>`. A string when
 * that is known in this turn (no token, or one verified before), else a promise.
 */
export type ClientKeyOf = (request: Request, serverContext: unknown) => string | Promise<string>;

export interface ClientKeyOptions {
  /** The same verification as the APIs: an invalid or expired token counts as no token. */
  resolveViewer: ViewerResolver;
  /** Peers whose X-Forwarded-For is believed (addresses, CIDRs or proxy-addr's names). */
  trustedProxies: string[];
}

export function createClientKey({ resolveViewer, trustedProxies }: ClientKeyOptions): ClientKeyOf {
  const addressKeyOf = createAddressKey(trustedProxies);
  const keyOf = (viewer: Viewer | undefined, request: Request, serverContext: unknown) =>
    viewer?.kind === 'customer' ? `sub:${viewer.customerId}` : addressKeyOf(request, serverContext);
  return (request, serverContext) => {
    const header = request.headers.get('authorization');
    if (header === null) return addressKeyOf(request, serverContext);
    const known = resolveViewer.known?.(header);
    if (known) return keyOf(known, request, serverContext);
    // Never waits for the identity provider: a product read carrying a token must not.
    return resolveViewer.withoutWaiting(header).then((viewer) => keyOf(viewer, request, serverContext));
  };
}

/** `ip:<client address>`, the address as the rate limits see it (X-Forwarded-For of trusted proxies). */
export function createAddressKey(
  trustedProxies: string[],
): (request: Request, serverContext: unknown) => string {
  const trust = proxyaddr.compile(trustedProxies);
  // Without X-Forwarded-For the address key is the peer's, the same for every request of a
  // keep-alive connection: worked out once per socket (parsing it was ~5 µs of every request).
  const keyOfSocket = new WeakMap<Socket, string>();
  return (request, serverContext) => {
    const socket = (serverContext as { req?: IncomingMessage } | null)?.req?.socket;
    if (!socket || request.headers.has('x-forwarded-for'))
      return `ip:${addressKey(clientAddress(request, serverContext, trust))}`;
    let key = keyOfSocket.get(socket);
    if (key === undefined) {
      key = `ip:${addressKey(clientAddress(request, serverContext, trust))}`;
      keyOfSocket.set(socket, key);
    }
    return key;
  };
}

/**
 * The peer's address, or the right-most X-Forwarded-For entry not added by a trusted proxy
 * (proxy-addr, as Express's `trust proxy`). Without a socket (in-process `yoga.fetch`): 'local'.
 */
function clientAddress(
  request: Request,
  serverContext: unknown,
  trust: ReturnType<typeof proxyaddr.compile>,
) {
  const req = (serverContext as { req?: IncomingMessage } | null)?.req;
  const remoteAddress = req?.socket?.remoteAddress;
  if (!remoteAddress) return 'local';
  const forwardedFor = request.headers.get('x-forwarded-for');
  const view = {
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
    connection: { remoteAddress },
    socket: { remoteAddress },
  } as unknown as IncomingMessage;
  return proxyaddr(view, trust);
}

/**
 * IPv6 clients are usually given a whole /64: it is counted as one client, or one could rotate
 * addresses past the limit (and grow the per-process store). IPv4-mapped addresses count as IPv4.
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${parsed.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}
