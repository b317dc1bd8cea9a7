const CROCKFORD_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** The stored (upper-case) form of a ULID, or null when the text is not a ULID at all. */
export function canonicalUlid(text: string): string | null {
  const upper = text.toUpperCase();
  return CROCKFORD_ULID.test(upper) ? upper : null;
}
