import { createSecretKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { JwtConfig } from '../config';
import { ANONYMOUS, INVALID, bearerToken, type Viewer } from './viewer';

export type ViewerResolver = (authorizationHeader: string | null) => Promise<Viewer>;

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
export function createViewerResolver(jwt: JwtConfig & { secret?: string }): ViewerResolver {
  if (!jwt.jwksUrl && !jwt.secret) throw new Error('JWT verification needs a secret or a JWKS URL');
  // A KeyObject made once: given raw bytes, jose imports the HMAC key again on every verify.
  const key: KeyObject | JWTVerifyGetKey = jwt.jwksUrl
    ? createRemoteJWKSet(new URL(jwt.jwksUrl), { timeoutDuration: 3_000, cooldownDuration: 30_000 })
    : createSecretKey(Buffer.from(jwt.secret ?? '', 'utf8'));

  const options = {
    algorithms: jwt.algorithms,
    ...(jwt.issuer ? { issuer: jwt.issuer } : {}),
    ...(jwt.audience ? { audience: jwt.audience } : {}),
    clockTolerance: 5,
  };

  return async (header) => {
    const token = bearerToken(header);
    if (token === null) return ANONYMOUS;
    if (token === '') return INVALID;
    try {
      const { payload } = await (typeof key === 'function'
        ? jwtVerify(token, key, options)
        : jwtVerify(token, key, options));
      if (typeof payload.sub !== 'string' || payload.sub === '') return INVALID;
      return { kind: 'customer', customerId: payload.sub, scopes: scopesOf(payload) };
    } catch {
      return INVALID;
    }
  };
}
