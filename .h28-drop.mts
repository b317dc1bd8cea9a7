import { MongoClient } from 'mongodb';
const client = await MongoClient.connect('mongodb://127.0.0.1:27391/');
const db = client.db(process.argv[2]);
const names = async () => (await db.collection('products').listIndexes().toArray()).map((i) => i.name);
if (process.argv[3] === 'drop') await db.collection('products').dropIndex('search_grams_1');
console.log(process.argv[3] ?? 'list', (await names()).join(','));
await client.close();
