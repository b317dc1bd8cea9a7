import type { Collection, Document, Filter } from 'mongodb';

export interface IdOrderWalk<T extends Document> {
  /** Where the walk starts and stops (`{$gt}`/`{$lt}` on `_id`), if anywhere. */
  idRange?: unknown;
  direction: 1 | -1;
  /** Documents read in `_id` order at most, matching or not. */
  budget: number;
  match: Filter<T>;
  skip?: number;
  limit: number;
  projection: Document;
}

/**
 * Up to `limit` matches (after `skip`) among at most `budget` documents read in `_id` order: the
 * one order DocumentDB serves from an index, so the walk stops early and never sorts. Callers
 * fall back to an index of their own when it comes back short.
 */
export function walkInIdOrder<T extends Document>(
  collection: Collection<T>,
  { idRange, direction, budget, match, skip = 0, limit, projection }: IdOrderWalk<T>,
  options: Parameters<Collection<T>['aggregate']>[1],
): Promise<T[]> {
  return collection
    .aggregate<T>(
      [
        ...(idRange === undefined ? [] : [{ $match: { _id: idRange } }]),
        { $sort: { _id: direction } },
        { $limit: budget },
        { $match: match },
        ...(skip > 0 ? [{ $skip: skip }] : []),
        { $limit: limit },
        // An empty $project is an error on MongoDB.
        ...(Object.keys(projection).length > 0 ? [{ $project: projection }] : []),
      ],
      options,
    )
    .toArray();
}
