import { brandWithType, type OutputType, type SchemaTypes } from '@pothos/core';
import { badUserInput } from '../errors';

/**
 * Global IDs are base64url("Typename:databaseId"). Decoding is strict, so a malformed or foreign
 * ID is a BAD_USER_INPUT error rather than an internal one.
 */

export const NODE_TYPES = new Set(['Product', 'Variant', 'Order', 'OrderItem']);

export function encodeGlobalId(typename: string, id: bigint | number | string): string {
  return Buffer.from(`${typename}:${id}`, 'utf8').toString('base64url');
}

export function decodeGlobalId(globalId: string): { typename: string; id: string } {
  const decoded = /^[A-Za-z0-9_-]{1,64}$/.test(globalId)
    ? Buffer.from(globalId, 'base64url').toString('utf8')
    : '';
  const match = /^([A-Za-z]+):([1-9][0-9]{0,15})$/.exec(decoded);
  if (!match || !NODE_TYPES.has(match[1] as string)) {
    throw badUserInput({ id: [`"${globalId.slice(0, 100)}" is not a valid global ID.`] });
  }
  return { typename: match[1] as string, id: match[2] as string };
}

/** The numeric database id of a decoded global ID (always a safe integer after decoding). */
export function databaseIdOf(id: string | number): number {
  return Number(id);
}

/**
 * Brands loaded node values with their type name as soon as they are loaded. Pothos brands a batch
 * only after all of it settles, yet its request cache already hands the pending entries to another
 * `node`/`nodes` field asking for the same ID, which could then meet an unbranded value and fail to
 * resolve the Node interface. Error entries are left as they are.
 */
export function brandedNodes<T>(typename: string, values: T[]): T[] {
  // The brand must be the type *name*: Pothos brands again with the name, and a brand is immutable.
  const brand = typename as OutputType<SchemaTypes>;
  for (const value of values) if (!(value instanceof Error)) brandWithType(value, brand);
  return values;
}
