import { compress, type Encoding } from './use-compression';

/** One body, loaded once per process and compressed at most once per encoding; every request shares the bytes. */
export interface SharedBody {
  /** The bytes as sent: identity when `encoding` is undefined. */
  bytes(encoding: Encoding | undefined): Promise<Buffer>;
}

/**
 * Pages and assets every client gets the same bytes of (GraphiQL's page, the docs' scripts): a
 * copy compressed anew per request held its own megabytes until the socket took them, so many
 * clients at once grew the process by gigabytes. A failed load or compression is tried again by
 * the next request.
 */
export function sharedBody(load: () => Promise<Buffer>): SharedBody {
  let identity: Promise<Buffer> | undefined;
  const encoded = new Map<Encoding, Promise<Buffer>>();
  const original = () =>
    (identity ??= load().catch((error: unknown) => {
      identity = undefined;
      throw error;
    }));
  return {
    bytes(encoding) {
      if (!encoding) return original();
      let bytes = encoded.get(encoding);
      if (!bytes) {
        bytes = original().then((body) => compress(body, encoding));
        bytes.catch(() => encoded.delete(encoding));
        encoded.set(encoding, bytes);
      }
      return bytes;
    },
  };
}

/** A view of shared bytes for a Response body, not a copy. */
export function viewOf(bytes: Buffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
}
