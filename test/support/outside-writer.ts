import { MongoClient, type Collection, type Document } from 'mongodb';

/**
 * Another application writing the store, the way laravel-mongodb or an importer does: its own
 * client and nothing of the gateway's (no repositories, no records, no indexes), the driver's
 * default ObjectId `_id`s, `$set` of the fields it changed.
 */
export interface OutsideWriter {
  products: Collection<Document>;
  orders: Collection<Document>;
  close(): Promise<void>;
}

export async function openOutsideWriter(uri: string, dbName: string): Promise<OutsideWriter> {
  const client = await MongoClient.connect(uri);
  const db = client.db(dbName);
  return {
    products: db.collection('products'),
    orders: db.collection('orders'),
    close: () => client.close(),
  };
}

/**
 * Another product like `template`, as a writer would insert it: keyed `id` (its variant too, so
 * the unique variant index takes it), filed under `category` as stored (`category_key` as given).
 */
export function productLike(
  template: Document,
  id: number,
  category: string,
  changes: Document = {},
): Document {
  return {
    ...template,
    _id: id,
    id,
    category_name: category,
    category_key: category,
    variant: { ...(template.variant as Document), id },
    ...changes,
  };
}
