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
