import type { Document, Filter } from 'mongodb';
import type { ProductDoc } from '../documents';
import type { KeyShape } from '../foreign-keys';
import type { ProductCriteria } from './product-plans';
import { WITHOUT_SEARCH_FIELDS } from './product-search';

/** How a product read handles stored rows: keys, projections and filters shared by its parts. */

export interface KeysetWindow {
  afterId?: number;
  beforeId?: number;
  limit: number;
  /** Walk backwards from `beforeId` (or the end); rows come back in descending id order. */
  descending: boolean;
}

/** `_id` stays: a numeric one must be the id (src/db/document-reading.ts). */
export const PROJECTION = WITHOUT_SEARCH_FIELDS;

export const PRODUCT_KEYS: KeyShape<number> = {
  field: 'id',
  isOwnKey: (key) => typeof key === 'number',
  valueOf: (raw) => (typeof raw === 'number' && Number.isSafeInteger(raw) ? raw : undefined),
};

/** A product as stored, by this or another writer: nothing is known until readProduct. */
export interface Raw {
  _id?: unknown;
  [field: string]: unknown;
}
export const raw = (filter: Filter<ProductDoc>) => filter as Filter<Document>;
/** A condition on `_id`, which the driver's types take for an ObjectId. */
export const onKeys = (condition: object) => ({ _id: condition }) as Filter<Document>;
/** The id a stored product is listed by: its numeric `_id`, or else its `id`. */
export const listedId = (row: Raw) => (typeof row._id === 'number' ? row._id : (row.id as number));
export const ownKeyed = (row: Raw) => PRODUCT_KEYS.isOwnKey(row._id);
export const unfiltered = (criteria: ProductCriteria) =>
  criteria.words.length === 0 && criteria.category === undefined;
