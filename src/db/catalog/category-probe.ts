import type { Collection, Document } from 'mongodb';
import { categoryKey, type ProductCriteria } from './product-plans';

/**
 * Whether any product is filed under a category, by one index lookup on `category_key_1` (the
 * first key only, nothing fetched but `_id`). A category page walks the primary key in page
 * order testing each product (the only order DocumentDB reads from an index), which for a category
 * no product has means walking the whole collection: at 100,000 products, 20 clients asking
 * random unknown categories held the database at 165 % of a core (issue 36, row 11). Asked first,
 * an unknown category's page is empty for the cost of the lookup.
 *
 * Only "none" decides anything, and it is read from the database on every ask, so it is exact.
 * "Some" only lets the page be read as before: a category that lost all its products since reads
 * its page the slow way until the set of known ones is renewed (at most KNOWN_CATEGORIES of them).
 */

/** Categories seen to hold products, remembered so their pages skip the lookup. */
const KNOWN_CATEGORIES = 10_000;

export function createCategoryProbe(stored: Collection<Document>, reads: object) {
  let known = new Set<string>();
  async function categoryHeld(category: string, signal?: AbortSignal): Promise<boolean> {
    const key = categoryKey(category);
    if (known.has(key)) return true;
    const found = await stored.findOne(
      { category_key: key },
      // Unhinted: an equality on an indexed field is a bitmap index scan (a dropped index: a scan).
      { projection: { _id: 1 }, ...reads, signal },
    );
    if (!found) return false;
    if (known.size >= KNOWN_CATEGORIES) known = new Set();
    known.add(key);
    return true;
  }
  /** True for criteria naming a category no product has: their pages are empty. */
  return async (criteria: ProductCriteria, signal?: AbortSignal): Promise<boolean> =>
    criteria.category !== undefined && !(await categoryHeld(criteria.category, signal));
}
