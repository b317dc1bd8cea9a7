import { totalKey, criteriaOfKey } from './kept-count';
import type { GroupCount, Grouping } from './product-groups';
import type { ProductCriteria } from './product-plans';
import type { CallOptions } from '../guards/deadline';
import type { KeysetWindow, ProductPage, ProductRepository } from './product-repository';
import type { ProductDoc } from '../documents';

/**
 * What a cached answer read, as tags on its entry: each product filter it listed or counted
 * (`list:<totalKey>`), each grouped count (`groups:categories`), each product or variant it asked
 * for by id (found or not). A change then purges only the entries whose reads it can alter
 * (src/db/derived/product-changes.ts).
 */

/** Cache entries holding a product or variant whose id the answer did not select carry this tag. */
export const ANY_PRODUCT_TAG = 'product:*';

const LIST = 'list:';
const GROUPS = 'groups:';

export const listTag = (criteria: ProductCriteria) => `${LIST}${totalKey(criteria)}`;
export const groupsTag = (grouping: Grouping) => `${GROUPS}${grouping}`;

/** Tags that name a filter, not an entity: a purge decides each of them by the change. */
export const FILTER_TAG_PREFIXES = [LIST, GROUPS] as const;

/** What a filter tag names: the criteria of a list, or a grouping. */
export function readOfTag(tag: string): { criteria: ProductCriteria } | { grouping: Grouping } | undefined {
  if (tag.startsWith(GROUPS)) {
    const grouping = tag.slice(GROUPS.length);
    return grouping === 'categories' || grouping === 'brands' ? { grouping } : undefined;
  }
  const criteria = tag.startsWith(LIST) ? criteriaOfKey(tag.slice(LIST.length)) : undefined;
  return criteria && { criteria };
}

/** A request's product repository that notes what each read names (one object per request). */
class RecordedReads {
  readonly tags = new Set<string>();
  private readonly inner: ProductRepository;

  constructor(inner: ProductRepository) {
    this.inner = inner;
  }

  count(criteria: ProductCriteria, options?: CallOptions): Promise<number> {
    this.tags.add(listTag(criteria));
    return this.inner.count(criteria, options);
  }

  findPage(
    criteria: ProductCriteria,
    skip: number,
    limit: number,
    options?: CallOptions,
  ): Promise<ProductPage> {
    this.tags.add(listTag(criteria));
    return this.inner.findPage(criteria, skip, limit, options);
  }

  findWindow(criteria: ProductCriteria, window: KeysetWindow, options?: CallOptions): Promise<ProductDoc[]> {
    this.tags.add(listTag(criteria));
    return this.inner.findWindow(criteria, window, options);
  }

  countByCategory(options?: CallOptions): Promise<GroupCount[]> {
    this.tags.add(groupsTag('categories'));
    return this.inner.countByCategory(options);
  }

  countByBrand(options?: CallOptions): Promise<GroupCount[]> {
    this.tags.add(groupsTag('brands'));
    return this.inner.countByBrand(options);
  }

  findByIds(ids: readonly number[], options?: CallOptions): Promise<ProductDoc[]> {
    for (const id of ids) this.tags.add(`product:${id}`);
    return this.inner.findByIds(ids, options);
  }

  findByVariantIds(ids: readonly number[], options?: CallOptions): Promise<ProductDoc[]> {
    for (const id of ids) this.tags.add(`variant:${id}`);
    return this.inner.findByVariantIds(ids, options);
  }

  insertMany(docs: ProductDoc[]): Promise<void> {
    return this.inner.insertMany(docs);
  }
}

/** `products` with its reads noted in `tags`. */
export function recordReads(products: ProductRepository): {
  products: ProductRepository;
  tags: ReadonlySet<string>;
} {
  const recorded = new RecordedReads(products);
  return { products: recorded, tags: recorded.tags };
}
