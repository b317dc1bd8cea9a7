import { createHash } from 'node:crypto';
import type { ProductCriteria } from '../db/product-repository';
import { badUserInput } from '../errors';

/**
 * Connection cursors: opaque base64url of "<query fingerprint>:<product id>". The fingerprint ties
 * a cursor to the field and criteria that issued it, so a cursor from another query is rejected
 * instead of silently paging through a different result set. Keyset paging on `id` keeps cursors
 * stable while products are added or removed.
 */

export type CursorQuery = 'products' | 'searchProducts';

export function queryFingerprint(query: CursorQuery, criteria: ProductCriteria): string {
  const canonical = JSON.stringify([
    query,
    criteria.words.map((word) => word.toLowerCase()),
    criteria.category?.toLowerCase() ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 12);
}

export function encodeCursor(fingerprint: string, productId: number): string {
  return Buffer.from(`${fingerprint}:${productId}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, fingerprint: string, argument: 'after' | 'before'): number {
  const decoded = /^[A-Za-z0-9_-]{1,64}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const match = /^([A-Za-z0-9_-]{12}):([1-9][0-9]{0,15})$/.exec(decoded);
  if (!match) throw badUserInput({ [argument]: [`The ${argument} cursor is not valid.`] });
  if (match[1] !== fingerprint) {
    throw badUserInput({ [argument]: [`The ${argument} cursor belongs to a different query.`] });
  }
  return Number(match[2]);
}
