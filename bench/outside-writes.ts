import type { Collection, Document } from 'mongodb';

/**
 * The outside writer of bench/cache-under-writes.ts and bench/cache-write-floor.ts: renames, price
 * changes and category moves in turn, each to a product drawn at random, with a plain-driver `$set`
 * (no `updated_at`). The same seed draws the same writes in both.
 */
export async function outsideWrites(products: Collection<Document>) {
  const docs = await products.find({}, { projection: { _id: 1, name: 1 } }).toArray();
  const categories = (await products.distinct('category_name')) as string[];
  let state = 7;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  let n = 0;
  /** Writes the next change; resolves when it is committed. */
  return async function writeNext(): Promise<void> {
    const doc = docs[Math.floor(random() * docs.length)]!;
    const category = categories[Math.floor(random() * categories.length)]!;
    const change = [
      { name: `${String(doc.name)} (${n})` },
      { 'variant.price.amount': `${(n % 90) + 10}.99` },
      { category_name: category, category_key: category.toLowerCase() },
    ][n % 3]!;
    n++;
    await products.updateOne({ _id: doc._id }, { $set: change });
  };
}
