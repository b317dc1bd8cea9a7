import type { Collection, Db } from 'mongodb';
import { criteriaFor } from '../src/catalog/product-query';
import type { ProductDoc } from '../src/db/documents';
import { productFilter } from '../src/db/catalog/product-plans';

/**
 * The search rows of `npm run bench:scale` (issue 20): each kind of term through the three search
 * endpoints of the running server, beside today's scan (the same regexes without grams: the page
 * in id order, then its exact count, sent through the driver) timed in the same run.
 */

export interface SearchTerm {
  kind: string;
  term: string;
  /** The bound in ms at 1M, where it sets one. */
  target?: number;
}

/** Shares are the generator's (seed 42): see docs/benchmarks.md, "Search". */
export const SEARCH_TERMS: readonly SearchTerm[] = [
  { kind: 'common word (~22 %)', term: 'software', target: 150 },
  { kind: 'word in ≤ 5 %', term: 'shieldnet', target: 50 },
  { kind: 'rare word (~1 %)', term: 'food', target: 50 },
  { kind: 'short word (2 chars)', term: '10' },
  { kind: 'two common words', term: 'gift card', target: 50 },
  { kind: 'two rarer words', term: 'shieldnet gbp', target: 50 },
];

const PER_PAGE = 15;

export interface SearchRow {
  name: string;
  target?: number;
  medianMs: number;
}

type Timed = (run: () => Promise<unknown>) => Promise<number>;

async function scan(products: Collection<ProductDoc>, term: string): Promise<void> {
  const filter = productFilter(criteriaFor(term, undefined));
  await products
    .find(filter, { projection: { _id: 0 } })
    .sort({ _id: 1 })
    .limit(PER_PAGE)
    .toArray();
  await products.countDocuments(filter);
}

export async function measureSearch(
  db: Db,
  origin: string,
  timed: Timed,
  log: (line: string) => void,
): Promise<SearchRow[]> {
  const products = db.collection<ProductDoc>('products');
  const total = await products.estimatedDocumentCount();
  const ok = async (url: string, init?: RequestInit) => {
    const response = await fetch(url, init);
    const body = await response.text();
    if (response.status !== 200 || body.includes('"errors"'))
      throw new Error(`${url}: ${body.slice(0, 300)}`);
  };
  const rows: SearchRow[] = [];
  for (const { kind, term, target } of SEARCH_TERMS) {
    const query = encodeURIComponent(term);
    const matches = await products.countDocuments(productFilter(criteriaFor(term, undefined)));
    // The measured share goes to the log, not the label: rows of one term line up across sizes.
    const label = `search "${term}" — ${kind}`;
    log(`${label}: ${((matches / total) * 100).toFixed(1)} % of ${total} products match`);
    const scanMs = await timed(() => scan(products, term));
    const endpoints: [string, () => Promise<void>][] = [
      ['?search=', () => ok(`${origin}/api/v1/products?search=${query}`)],
      ['/search?term=', () => ok(`${origin}/api/v1/products/search?term=${query}`)],
      [
        'searchProducts',
        () =>
          ok(`${origin}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              query: `{ searchProducts(term: ${JSON.stringify(term)}, first: ${PER_PAGE}) { totalCount edges { node { id name } } } }`,
            }),
          }),
      ],
    ];
    rows.push({ name: `${label}: today's scan (page + count, driver)`, medianMs: scanMs });
    for (const [endpoint, run] of endpoints) {
      const medianMs = await timed(run);
      rows.push({ name: `${label}: ${endpoint}`, medianMs, ...(target === undefined ? {} : { target }) });
      log(
        `${label} ${endpoint}: ${medianMs.toFixed(1)} ms (scan ${scanMs.toFixed(1)}, ${(scanMs / medianMs).toFixed(1)}×)`,
      );
    }
  }
  return rows;
}
