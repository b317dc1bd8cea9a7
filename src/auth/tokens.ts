import { createSecretKey, type KeyObject } from 'node:crypto';
import { jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { createBoundedCache } from '../bounded-cache';
import type { JwtConfig } from '../config';
import { remoteKeySet } from './jwks';
import { ANONYMOUS, INVALID, bearerToken, type Viewer } from './viewer';

export interface ViewerResolver {
  (authorizationHeader: string | null): Promise<Viewer>;
  /**
   * The caller when that needs no network: a token verified before, or one the keys in hand verify.
   * Undefined otherwise. For what only counts a client (the rate limits) and must never wait for
   * the identity provider.
   */
  withoutWaiting(authorizationHeader: string | null): Promise<Viewer | undefined>;
  /**
   * What `withoutWaiting` would answer when that needs no await at all (no token, a malformed one,
   * one verified before); undefined when a signature must be checked first. The rate limits count
   * most requests in the same turn with it.
   */
  known?(authorizationHeader: string | null): Viewer | undefined;
}

function scopesOf(payload: JWTPayload): Set<string> {
  const scope = payload.scope ?? payload.scp;
  if (typeof scope === 'string') return new Set(scope.split(' ').filter(Boolean));
  if (Array.isArray(scope)) return new Set(scope.filter((item): item is string => typeof item === 'string'));
  return new Set();
}

/**
 * Verifies bearer tokens with an explicit algorithm allow-list (so `alg: none` and key confusion
 * fail), enforcing exp/nbf when present and issuer/audience when configured.
 */
export function createViewerResolver(
  jwt: JwtConfig & { secret?: string },
  { onKeySetFailure }: { onKeySetFailure?: (error: Error) => void } = {},
): ViewerResolver {
  if (!jwt.jwksUrl && !jwt.secret) throw new Error('JWT verification needs a secret or a JWKS URL');
  // A KeyObject made once: given raw bytes, jose imports the HMAC key again on every verify.
  const remote = jwt.jwksUrl ? remoteKeySet(new URL(jwt.jwksUrl), undefined, onKeySetFailure) : undefined;
  const secretKey = createSecretKey(Buffer.from(jwt.secret ?? '', 'utf8'));

  const options = {
    algorithms: jwt.algorithms,
    ...(jwt.issuer ? { issuer: jwt.issuer } : {}),
    ...(jwt.audience ? { audience: jwt.audience } : {}),
    clockTolerance: 5,
  };

  const verified = createBoundedCache<Viewer>(VERIFIED_TOKENS);

  async function verify(token: string, key: KeyObject | JWTVerifyGetKey): Promise<Viewer> {
    try {
      const { payload } = await (typeof key === 'function'
        ? jwtVerify(token, key, options)
        : jwtVerify(token, key, options));
      if (typeof payload.sub !== 'string' || payload.sub === '') return INVALID;
      const viewer: Viewer = {
        kind: 'customer',
        customerId: payload.sub,
        scopes: scopesOf(payload),
        ...(payload.exp === undefined ? {} : { expiresAt: payload.exp * 1000 }),
      };
      verified.set(token, viewer, token.length, rememberFor(payload, options.clockTolerance));
      return viewer;
    } catch {
      return INVALID;
    }
  }

  const resolve = async (header: string | null): Promise<Viewer> => {
    const token = bearerToken(header);
    if (token === null) return ANONYMOUS;
    if (token === '') return INVALID;
    return verified.get(token) ?? verify(token, remote ? remote.getKey : secretKey);
  };
  const known = (header: string | null): Viewer | undefined => {
    const token = bearerToken(header);
    if (token === null) return ANONYMOUS;
    if (token === '') return INVALID;
    return verified.get(token);
  };
  return Object.assign(resolve, {
    known,
    async withoutWaiting(header: string | null): Promise<Viewer | undefined> {
      if (!remote) return resolve(header);
      const token = bearerToken(header);
      if (!token) return undefined;
      const inHand = remote.current();
      const viewer = verified.get(token) ?? (inHand ? await verify(token, inHand) : undefined);
      return viewer?.kind === 'customer' ? viewer : undefined;
    },
  });
}

/**
 * Verified tokens are remembered (a client sends the same one with every request, and the
 * signature check was a sixth of an order request's CPU): at most a minute, never past `exp`
 * (with the same tolerance), 1 MB of tokens in all. Failures are never remembered.
 */
const VERIFIED_TOKENS = { maxBytes: 1_048_576, maxEntryBytes: 8_192 };
const REMEMBER_MS = 60_000;

function rememberFor(payload: JWTPayload, toleranceSeconds: number): number {
  if (payload.exp === undefined) return REMEMBER_MS;
  return Math.min(REMEMBER_MS, (payload.exp + toleranceSeconds) * 1000 - Date.now());
}
