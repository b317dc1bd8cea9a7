/** Canonical (upper-case) Crockford base32 ULID; the first character keeps it within 48 bits of time. */
export const ULID_PATTERN = '^[0-7][0-9A-HJKMNP-TV-Z]{25}$';
const CROCKFORD_ULID = new RegExp(ULID_PATTERN);

/** The stored (upper-case) form of a ULID, or null when the text is not a ULID at all. */
export function canonicalUlid(text: string): string | null {
  const upper = text.toUpperCase();
  return CROCKFORD_ULID.test(upper) ? upper : null;
}
