import { BSON, type Document } from 'mongodb';
import { listMatch, readableMatch } from '../catalog/filter-match';
import type { FeedBatch, FeedChange } from '../feed-types';
import type { ProductCriteria } from '../catalog/product-plans';
import { ANY_PRODUCT_TAG, readOfTag } from '../catalog/read-tags';
import { groupRowOf } from './total-moves';

/**
 * What a batch of product changes purges from the response caches. An entry is tagged with the
 * products it holds and the filters it read (src/db/catalog/read-tags.ts): a change purges the entries
 * holding the product, and those of every filter whose matches it can alter — the product entered
 * or left it, became readable or not (counts), or changed the key lists are ordered by (every page
 * after it shifts). A filter it matched neither before nor after keeps its entries. Without the
 * document before a change (polling, change streams) or with unseen changes, everything goes.
 */
export type CacheScope = 'all' | { tags: readonly string[]; touches(filterTag: string): boolean };

const same = (a: unknown, b: unknown) =>
  Buffer.from(BSON.serialize({ value: a })).equals(BSON.serialize({ value: b }));

/** The cache tags of the product and variant a document is. */
function tagsOf(doc: Document | null | undefined): string[] {
  const tags: string[] = [];
  if (typeof doc?.id === 'number') tags.push(`product:${doc.id}`);
  const variant = (doc?.variant as Document | undefined)?.id;
  if (typeof variant === 'number') tags.push(`variant:${variant}`);
  return tags;
}

/** Where a document stands for a list: out, in (readable or not), or unsure. */
function listState(criteria: ProductCriteria, doc: Document | null): string {
  if (doc === null) return 'out';
  const listed = listMatch(criteria, doc);
  if (listed !== true) return listed === false ? 'out' : 'unsure';
  const readable = readableMatch(doc);
  return readable === 'unsure' ? 'unsure' : `in ${readable}`;
}

type KnownChange = { before: Document | null; after: Document | null };

function touchesList(criteria: ProductCriteria, { before, after }: KnownChange): boolean {
  const from = listState(criteria, before);
  const to = listState(criteria, after);
  if (from === 'unsure' || from !== to) return true;
  // Listed before and after: its place in id order moves only with its keys.
  return from !== 'out' && !(same(before!._id, after!._id) && same(before!.id, after!.id));
}

function touches(tag: string, changes: readonly KnownChange[]): boolean {
  const read = readOfTag(tag);
  if (!read) return true;
  if ('grouping' in read) {
    return changes.some(({ before, after }) => {
      const from = groupRowOf(read.grouping, before);
      return from === 'unsure' || from !== groupRowOf(read.grouping, after);
    });
  }
  return changes.some((change) => touchesList(read.criteria, change));
}

function known(change: FeedChange<Document>): KnownChange | undefined {
  const before = change.before ?? (change.inserted ? null : undefined);
  return before === undefined ? undefined : { before, after: change.document };
}

export function cacheScopeOf(batch: FeedBatch<Document>): CacheScope {
  if (batch.unseenChanges) return 'all';
  const changes = batch.changes.map(known);
  if (changes.some((change) => change === undefined)) return 'all';
  const tags = batch.changes.flatMap((change) => [...tagsOf(change.before), ...tagsOf(change.document)]);
  return {
    tags: [...new Set([ANY_PRODUCT_TAG, ...tags])],
    touches: (filterTag) => touches(filterTag, changes as KnownChange[]),
  };
}
