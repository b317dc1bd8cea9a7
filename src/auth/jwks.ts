import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';

/**
 * The identity provider's key set is fetched by us, not by jose's remote set: that one read any
 * body whole (100 MB of JSON was accepted, +390 MB) and retried at once after every failure
 * (396 fetches, ~2 GB, in 8 s from a server answering garbage).
 */
export const JWKS_LIMITS = {
  /** A key set is a few kB; a body past this is refused while it streams. */
  maxBytes: 256 * 1024,
  /** Connect, headers and body together. */
  timeoutMs: 2_000,
  /** Between two fetches, whatever the last one gave: a failing provider is asked twice a minute. */
  cooldownMs: 30_000,
  /** Keys are fetched again after this (rotation), or sooner for a token with an unknown `kid`. */
  maxAgeMs: 10 * 60_000,
};

export interface RemoteKeySet {
  /** For jwtVerify: fetches (one fetch at a time, at most once per cool-down) when needed. */
  getKey: JWTVerifyGetKey;
  /** The keys in hand, without any network; undefined before the first successful fetch. */
  current(): JWTVerifyGetKey | undefined;
}

export function remoteKeySet(
  url: URL,
  limits: typeof JWKS_LIMITS = JWKS_LIMITS,
  onFailure: (error: Error) => void = () => undefined,
): RemoteKeySet {
  let keys: JWTVerifyGetKey | undefined;
  let loadedAt = 0;
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;

  const refresh = (): Promise<void> => {
    if (inFlight) return inFlight;
    if (Date.now() - lastAttempt < limits.cooldownMs) return Promise.resolve();
    lastAttempt = Date.now();
    inFlight = fetchKeySet(url, limits)
      .then(
        (set) => {
          keys = createLocalJWKSet(set);
          loadedAt = Date.now();
        },
        (error: unknown) => onFailure(error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  return {
    current: () => keys,
    async getKey(header, token) {
      if (!keys || Date.now() - loadedAt > limits.maxAgeMs) await refresh();
      if (!keys) throw new errors.JWKSNoMatchingKey();
      try {
        return await keys(header, token);
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
        // A key rotated in since the last fetch (the cool-down keeps unknown kids from forcing fetches).
        await refresh();
        return keys(header, token);
      }
    },
  };
}

async function fetchKeySet(url: URL, limits: typeof JWKS_LIMITS): Promise<JSONWebKeySet> {
  const response = await fetch(url, {
    signal: AbortSignal.timeout(limits.timeoutMs),
    headers: { accept: 'application/json' },
  });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`the JWKS URL answered ${response.status}`);
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.byteLength;
    if (bytes > limits.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`the JWKS document is over ${limits.maxBytes} bytes`);
    }
    chunks.push(read.value);
  }
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (!Array.isArray((parsed as { keys?: unknown } | null)?.keys))
    throw new Error('the JWKS document has no keys');
  return parsed as JSONWebKeySet;
}
