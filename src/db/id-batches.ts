import type { Collection, Document, Filter } from 'mongodb';

/**
 * A whole collection in `_id` order, a batch at a time, each batch its own query (one reply, no
 * cursor kept open): DocumentDB expires a persisted cursor 60 s after it was made, however often
 * it is read (`documentdb.cursorExpiryTimeLimitSeconds`), so one cursor over 1,000,000 products
 * whose batches take work ended with "Cursor not found" (the log's first resync at 1,000,000).
 *
 * A range on `_id` stays within one type (numbers, strings, ObjectIds …: BSON compares no two
 * kinds), so when a kind runs out its largest `_id` is left behind for good (`$not: {$lte}`) and
 * the next query starts at the next kind. Each such step walks past the earlier kinds once.
 */
/** Which values BSON compares with one another (numbers of every width are one kind). */
function kindOf(id: unknown): string {
  const bsonType = (id as { _bsontype?: string } | null)?._bsontype;
  if (bsonType) return ['Long', 'Double', 'Int32', 'Decimal128'].includes(bsonType) ? 'number' : bsonType;
  if (id instanceof Date) return 'date';
  return id === null ? 'null' : typeof id;
}

export async function forEachIdBatch(
  collection: Collection<Document>,
  { projection, batchSize, comment }: { projection?: Document; batchSize: number; comment?: string },
  onBatch: (docs: Document[]) => Promise<void>,
): Promise<void> {
  const finished: Filter<Document>[] = [];
  let last: { id: unknown } | undefined;
  for (;;) {
    const clauses = [...finished, ...(last ? [{ _id: { $gt: last.id } }] : [])];
    const filter = (clauses.length === 0 ? {} : { $and: clauses }) as Filter<Document>;
    const docs = await collection
      .find(filter, { projection, comment })
      .sort({ _id: 1 })
      .limit(batchSize)
      .batchSize(batchSize)
      .toArray();
    if (docs.length > 0) {
      await onBatch(docs);
      // A batch may run from one kind into the next: each kind it left is finished.
      for (let index = 1; index < docs.length; index++)
        if (kindOf(docs[index]!._id) !== kindOf(docs[index - 1]!._id))
          finished.push({ _id: { $not: { $lte: docs[index - 1]!._id } } } as Filter<Document>);
      last = { id: docs.at(-1)!._id as unknown };
      continue;
    }
    if (!last) return;
    // This kind ran out: the next query starts at the next one, if any.
    finished.push({ _id: { $not: { $lte: last.id } } } as Filter<Document>);
    last = undefined;
  }
}
