import type { Collection, Document } from 'mongodb';
import type { CallOptions, ReadLimits } from '../guards/deadline';
import { ID_FIELD_INDEX } from '../mongo';
import { onKeys, PROJECTION, type Raw } from './product-rows';

/** Products by their keys (the ids a node or a line item names), as stored: each row still to be read. */
export function createKeyReads(stored: Collection<Document>, reads: ReadLimits) {
  return {
    /** By the primary key (`_id` = id); the ids it does not hold, by the `id` field's index. */
    async byIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<Raw[]> {
      const own = await stored
        .find(onKeys({ $in: [...ids] }), { projection: PROJECTION, ...reads, signal })
        .toArray();
      const found = new Set<unknown>(own.map((row) => row._id));
      const missing = ids.filter((id) => !found.has(id));
      const theirs =
        missing.length === 0
          ? []
          : await stored
              .find(
                { id: { $in: missing }, _id: { $not: { $type: 'number' as 'double' } } },
                { projection: PROJECTION, hint: ID_FIELD_INDEX, ...reads, signal },
              )
              .toArray();
      return [...own, ...theirs] as Raw[];
    },

    async byVariantIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<Raw[]> {
      return (await stored
        .find({ 'variant.id': { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal })
        .toArray()) as Raw[];
    },
  };
}
