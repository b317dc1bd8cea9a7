import { parseArgs } from 'node:util';
import { criteriaFor } from '../src/catalog/product-query';
import { connectDatabase } from '../src/db/mongo';
import { productFilter } from '../src/db/catalog/product-plans';
import { createProductRepository } from '../src/db/catalog/product-repository';
import { medianTime } from './median';
import { loadText } from './proc';

/**
 * Issue 35, item 6: what a search costs the database on the gateway's projection (product_search),
 * with no kept total: the exact count (through the grams where a word has them) and a page the
 * id-order walk cannot fill (selected on the projection, then read by _id), against the same
 * regexes run on the owner's products alone (the scan). Medians of --samples, one at a time.
 *   node --import tsx bench/projection-counts.ts --uri URI --db NAME [--samples 5]
 */

const { values } = parseArgs({
  options: {
    uri: { type: 'string' },
    db: { type: 'string' },
    samples: { type: 'string', default: '5' },
  },
});
if (!values.uri || !values.db) {
  console.log('Usage: node --import tsx bench/projection-counts.ts --uri URI --db NAME [--samples N]');
  process.exit(2);
}
const TERMS = ['software', 'shieldnet', 'food', 'gift card', 'shieldnet gbp'];
const samples = Number(values.samples);
const database = await connectDatabase({ uri: values.uri, dbName: values.db, socketTimeoutMS: 600_000 });
const products = createProductRepository(database.db);

const timed = (run: () => Promise<unknown>) => medianTime(run, samples);

console.log(`load ${loadText()}`);
console.log(
  "| search | count (projection) | page 40 of 15 (projection + _id read) | the scan's count (products) |",
);
console.log('|---|--:|--:|--:|');
for (const term of TERMS) {
  const criteria = criteriaFor(term, undefined);
  const count = await timed(() => products.count(criteria));
  const page = await timed(() => products.findPage(criteria, 39 * 15, 15));
  const scan = await timed(() =>
    database.db.collection('products').countDocuments(productFilter(criteria) as never),
  );
  console.log(`| \`${term}\` | ${count.toFixed(1)} ms | ${page.toFixed(1)} ms | ${scan.toFixed(0)} ms |`);
}
console.log(`load ${loadText()}`);
await database.close();
