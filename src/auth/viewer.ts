/** Who is calling, as far as the token says. Products ignore it; orders require a customer. */
export type Viewer =
  | { kind: 'anonymous' }
  | { kind: 'invalid' }
  | {
      kind: 'customer';
      customerId: string;
      scopes: ReadonlySet<string>;
      /** The token's `exp` in ms since the epoch, when it has one: a live subscription ends then. */
      expiresAt?: number;
    };

export const ANONYMOUS: Viewer = { kind: 'anonymous' };
export const INVALID: Viewer = { kind: 'invalid' };

/** The token of an `Authorization: Bearer <token>` header; null when absent, '' when malformed. */
export function bearerToken(header: string | null): string | null {
  if (header === null || header.trim() === '') return null;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match?.[1] ?? '';
}
