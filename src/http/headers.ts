/** Headers and header parsing shared by every page and API this server answers. */

/** Sent with every HTML page and the docs assets; each page adds its own Content-Security-Policy. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
});

/** RFC 9110 `If-None-Match`: weak comparison (a `W/` prefix is ignored), `*` matches anything. */
export function ifNoneMatchMatches(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((raw) => {
    const tag = raw.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag.replace(/^W\//, '');
  });
}
