import { createHash } from 'node:crypto';
import type { ProductCriteria } from '../db/catalog/product-plans';
import { badUserInput } from '../errors';

/**
 * Connection cursors: opaque base64url of "<query fingerprint>:<row key>". The fingerprint ties
 * a cursor to the field and criteria that issued it, so a cursor from another query is rejected
 * instead of silently paging through a different result set. Keyset paging on a unique key
 * (a product's `id`, an order's `ulid`) keeps cursors stable while rows are added or removed.
 */

export type CursorQuery = 'products' | 'searchProducts';

/** A fingerprint of any JSON-serialisable description of a query. */
export function fingerprintOf(canonical: unknown): string {
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 12);
}

export function queryFingerprint(query: CursorQuery, criteria: ProductCriteria): string {
  return fingerprintOf([
    query,
    criteria.words.map((word) => word.toLowerCase()),
    criteria.category?.toLowerCase() ?? null,
  ]);
}

export function encodeCursor(fingerprint: string, key: number | string): string {
  return Buffer.from(`${fingerprint}:${key}`, 'utf8').toString('base64url');
}

const PRODUCT_KEY = /^[1-9][0-9]{0,15}$/;

/** The key inside a cursor issued for `fingerprint`; BAD_USER_INPUT for anything else. */
export function decodeKeyCursor(
  cursor: string,
  fingerprint: string,
  argument: 'after' | 'before',
  keyPattern: RegExp,
): string {
  const decoded = /^[A-Za-z0-9_-]{1,64}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const match = /^([A-Za-z0-9_-]{12}):(.{1,32})$/.exec(decoded);
  if (!match || !keyPattern.test(match[2] as string)) {
    throw badUserInput({ [argument]: [`The ${argument} cursor is not valid.`] });
  }
  if (match[1] !== fingerprint) {
    throw badUserInput({ [argument]: [`The ${argument} cursor belongs to a different query.`] });
  }
  return match[2] as string;
}

export function decodeCursor(cursor: string, fingerprint: string, argument: 'after' | 'before'): number {
  return Number(decodeKeyCursor(cursor, fingerprint, argument, PRODUCT_KEY));
}
