import type { Collection, Document } from 'mongodb';
import { READABLE_PRODUCT } from './readable-filter';

/** A category or brand with how many products it has. */
export interface GroupCount {
  /** The category key (lower-cased name) or the brand id. */
  key: string;
  name: string;
  productCount: number;
}

/** One `$group` row: the stored key and name, as any writer left them. */
export interface GroupRow {
  _id: { key?: unknown; name?: unknown };
  productCount: number;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The fields each grouped count groups on, as `countGroups` is given them. */
export const GROUPINGS = {
  categories: { key: 'category_key', name: 'category_name' },
  brands: { key: 'brand_id', name: 'brand_name' },
} as const;
export type Grouping = keyof typeof GROUPINGS;

/**
 * The `$group` rows as text, by (key, name): what mergeGroups reads, kept so that a change can
 * move one product from its row to another (src/db/derived/total-moves.ts) and the merge run again.
 */
export type GroupTally = ReadonlyMap<string, number>;

/** A key or name as text: numbers become text; anything else (null, missing) leaves the group out. */
function asText(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

/**
 * Rows whose names differ only in case (one key) merged, keeping the lowest name: on DocumentDB a
 * `$min` accumulator made the same $group 2.2× slower (1.3 s against 0.59 s at 100,000 products,
 * busy machine); a $group on the key alone with `$sum` was 0.35 s but has no name. Products
 * without a usable key or name cannot be listed under one and are not counted.
 */
export function mergeGroups(rows: readonly GroupRow[]): GroupCount[] {
  const byKey = new Map<string, GroupCount>();
  for (const { _id, productCount } of rows) {
    const key = asText(_id.key);
    const name = asText(_id.name);
    if (key === undefined || name === undefined) continue;
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { key, name, productCount });
    else
      byKey.set(key, {
        ...seen,
        name: seen.name < name ? seen.name : name,
        productCount: seen.productCount + productCount,
      });
  }
  return [...byKey.values()].sort((a, b) => compare(a.name, b.name) || compare(a.key, b.key));
}

/** The tally's row of a (key, name), or undefined where the pair is no group's. */
export function tallyKey(key: unknown, name: unknown): string | undefined {
  const keyText = asText(key);
  const nameText = asText(name);
  return keyText === undefined || nameText === undefined ? undefined : JSON.stringify([keyText, nameText]);
}

export function tallyOf(rows: readonly GroupRow[]): GroupTally {
  const tally = new Map<string, number>();
  for (const { _id, productCount } of rows) {
    const row = tallyKey(_id.key, _id.name);
    if (row !== undefined) tally.set(row, (tally.get(row) ?? 0) + productCount);
  }
  return tally;
}

export function groupsOf(tally: GroupTally): GroupCount[] {
  return mergeGroups(
    [...tally].map(([row, productCount]) => {
      const [key, name] = JSON.parse(row) as [string, string];
      return { _id: { key, name }, productCount };
    }),
  );
}

/**
 * Grouped on (key, name) in the database, as a tally (groupsOf merges it by key). Only products a page can
 * serve are counted (src/db/catalog/readable-filter.ts), so a group's count is its filter's total.
 */
export async function countGroups(
  stored: Collection<Document>,
  grouping: Grouping,
  options: { signal?: AbortSignal; maxTimeMS?: number },
): Promise<GroupTally> {
  const { key, name } = GROUPINGS[grouping];
  const rows = await stored
    .aggregate<GroupRow>(
      [
        { $match: READABLE_PRODUCT as Document },
        { $group: { _id: { key: `$${key}`, name: `$${name}` }, productCount: { $sum: 1 } } },
      ],
      options,
    )
    .toArray();
  return tallyOf(rows);
}
