import escapeStringRegexp from 'escape-string-regexp';
import type { Collection, Db, Filter } from 'mongodb';
import { projectionComplete, SEARCH_PROJECTION_COLLECTION } from './search-projection-mark';
import { chooseGrams, sampleOf, type GramChoice, type GramSample } from './gram-choice';
import {
  documentGrams,
  SEARCH_GRAMS_VERSION,
  searchTextHash,
  wordGrams,
  type SearchableText,
} from './search-grams';
import type { ProductDoc } from '../documents';
import { writtenSince as stampedSince } from '../feed/range';
import type { HandledBefore } from '../feed-types';
import type { Underived } from '../feed/underived';

/**
 * Search served by the n-gram index (src/db/catalog/search-grams.ts): the filters, and the choice
 * between the index and the walk in id order for one page.
 */

/**
 * In the order the `$or` tests them: the short fields first, so a candidate that matches in one
 * of them skips the longer regexes (a common word's count at 1M: 0.61 s in the order of the
 * contract, 0.41 s in this one).
 */
export const SEARCHABLE_FIELDS = [
  'category_name',
  'brand_name',
  'tags',
  'name',
  'short_description',
] as const;

/** The derived fields every product carries; never sent to clients. */
export interface SearchFields {
  /** Every gram of the searchable text (documentGrams), served by a multikey index. */
  search_grams: string[];
  /** SEARCH_GRAMS_VERSION of the rules that made search_grams; another value (or none) is stale. */
  search_grams_version: number;
  /** searchTextHash of the text the grams were made from: another value means they are stale. */
  search_text_hash: string;
}

export const SEARCH_GRAMS_INDEX = { key: { search_grams: 1 }, name: 'search_grams_1' } as const;
export const SEARCH_GRAMS_VERSION_INDEX = {
  key: { search_grams_version: 1 },
  name: 'search_grams_version_1',
} as const;
/** Left out of every read: the grams are several hundred bytes per product. */
export const WITHOUT_SEARCH_FIELDS = {
  search_grams: 0,
  search_grams_version: 0,
  search_text_hash: 0,
} as const;

export function searchFields(text: SearchableText): SearchFields {
  return {
    search_grams: documentGrams(text),
    search_grams_version: SEARCH_GRAMS_VERSION,
    search_text_hash: searchTextHash(text),
  };
}

/** The literal, case-insensitive match of one word: user text is escaped, never a pattern. */
function wordMatch(word: string): Filter<ProductDoc> {
  const literal = { $regex: escapeStringRegexp(word), $options: 'i' };
  return { $or: SEARCHABLE_FIELDS.map((field) => ({ [field]: literal })) };
}

/** The grams every match of all `words` must carry; empty when every word is shorter than a gram. */
export function searchGrams(words: readonly string[]): string[] {
  return [...new Set(words.flatMap(wordGrams))].sort();
}

/**
 * Products whose grams are missing or were made by other rules (three index-backed probes:
 * `$exists: false`, `$lt`, `$gt`; one `$or` of them, or `null`, `$ne`, are scans on DocumentDB).
 */
const UNINDEXED: Filter<ProductDoc>[] = [
  { search_grams_version: { $exists: false } },
  { search_grams_version: { $lt: SEARCH_GRAMS_VERSION } },
  { search_grams_version: { $gt: SEARCH_GRAMS_VERSION } },
];

/** Products written since `since`: the change feed may not have made their grams yet. */
export function writtenSince(since: HandledBefore): Filter<ProductDoc> {
  return stampedSince(since) as Filter<ProductDoc>;
}

/**
 * Whether any row of the search projection (src/db/derived/search-projection.ts) holds grams made by
 * other rules (a new version of the rules): then searches take the scan and stay exact until a
 * sync (`npm run search:index`, the log's resync) writes them.
 */
export async function hasUnindexed(rows: Collection<ProductDoc>, reads: object = {}): Promise<boolean> {
  const seen = await Promise.all(
    UNINDEXED.map((filter) =>
      rows
        .find(filter, { projection: { _id: 1 }, ...reads })
        .limit(1)
        .toArray(),
    ),
  );
  return seen.some((found) => found.length > 0);
}

/** What writes the search projection for products the change feed did not see (scripts/search-index.ts). */
export const SEARCH_INDEX_COMMAND = 'npm run search:index';

/**
 * How many products a search cannot find through the grams: every product while the projection
 * was never completed (then counted: a rare state), else the rows with grams of other rules.
 */
export async function countUnindexed(db: Db): Promise<number> {
  const rows = db.collection<ProductDoc>(SEARCH_PROJECTION_COLLECTION);
  if (!(await projectionComplete(db))) return db.collection('products').countDocuments();
  const counts = await Promise.all(UNINDEXED.map((filter) => rows.countDocuments(filter)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Products whose rows in the search projection may be stale, matched by the regexes alone on the
 * products themselves (src/db/catalog/search-pending.ts): polling, those written since the feed's
 * position; the log, the `_id`s its holder has not written yet (src/db/feed/underived.ts).
 */
export type Pending = { since: HandledBefore } | Underived;

/**
 * How a search reads: `grams` adds `search_grams: {$all}` to the word matches, so the multikey
 * index selects the candidates and the regexes verify them in the same query; `scan` is the word
 * matches alone (words shorter than a gram, or products without current grams). `pending`: the
 * products whose rows may be stale; absent when none may be.
 */
export type SearchPlan = ({ kind: 'grams'; pending?: Pending } & GramChoice) | { kind: 'scan' };

/**
 * Why a search read every product (`$regex` on each) instead of the grams: every word shorter than
 * a gram, rows of other rules or a projection never completed, or the change feed unable to say
 * which rows are stale (behind the request, or a resync).
 */
export type SearchScanReason = 'short_words' | 'unindexed' | 'feed_behind';

/** How long one answer of the probes (and of the projection's completeness) is reused. */
const UNINDEXED_RECHECK_MS = 1_000;

/** Products sampled for the grams' shares (src/db/catalog/gram-choice.ts), and how long a sample is used. */
const GRAM_SAMPLE_SIZE = 2_000;
const GRAM_SAMPLE_MAX_AGE_MS = 10 * 60_000;
const GRAM_SAMPLE_RETRY_MS = 10_000;

/** Which grams a random sample of products carries (a few tens of ms at 1,000,000 products). */
async function sampleGrams(products: Collection<ProductDoc>, reads: object): Promise<GramSample> {
  const rows = await products
    .aggregate<{ search_grams?: unknown }>(
      [{ $sample: { size: GRAM_SAMPLE_SIZE } }, { $project: { _id: 0, search_grams: 1 } }],
      // One reply (~1 MB), no getMore round trips.
      { ...reads, batchSize: GRAM_SAMPLE_SIZE },
    )
    .toArray();
  return sampleOf(rows.map((row) => row.search_grams));
}

/**
 * The newest sample; only the first search waits for one. An old one keeps serving while the
 * next is taken, and a failed attempt is retried after GRAM_SAMPLE_RETRY_MS.
 */
function sampledShares(
  products: Collection<ProductDoc>,
  reads: object,
): () => Promise<GramSample | undefined> {
  let current: GramSample | undefined;
  let taking: Promise<GramSample | undefined> | undefined;
  let dueAt = 0;
  return () => {
    const now = performance.now();
    if (!taking && now >= dueAt) {
      dueAt = now + GRAM_SAMPLE_MAX_AGE_MS;
      taking = sampleGrams(products, reads)
        .then(
          (sample) => (current = sample),
          () => {
            dueAt = performance.now() + GRAM_SAMPLE_RETRY_MS;
            return current;
          },
        )
        .finally(() => (taking = undefined));
    }
    return current ? Promise.resolve(current) : (taking ?? Promise.resolve(undefined));
  };
}

/** Plans searches over the search projection `rows`; shared by every request of one repository. */
export function createSearchPlanner(
  rows: Collection<ProductDoc>,
  reads: object = {},
  complete: () => Promise<boolean> = () => Promise.resolve(true),
) {
  let probe: { at: number; answer: Promise<boolean> } | undefined;
  function unindexed(): Promise<boolean> {
    const now = performance.now();
    if (!probe || now - probe.at >= UNINDEXED_RECHECK_MS) {
      const answer = Promise.all([complete(), hasUnindexed(rows, reads)]).then(
        ([whole, stale]) => !whole || stale,
      );
      probe = { at: now, answer };
      // A failed probe is not remembered: the next search asks again.
      answer.catch(() => {
        if (probe?.answer === answer) probe = undefined;
      });
    }
    return probe.answer;
  }
  const sample = sampledShares(rows, reads);
  /**
   * `pending` is read before the search: whatever the feed handles meanwhile is matched both ways.
   * `onScan` is told why a search scans.
   */
  return async function planSearch(
    words: readonly string[],
    pending?: Pending,
    onScan?: (reason: SearchScanReason) => void,
  ): Promise<SearchPlan> {
    const grams = searchGrams(words);
    const scanBecause = grams.length === 0 ? 'short_words' : (await unindexed()) ? 'unindexed' : undefined;
    if (scanBecause) {
      onScan?.(scanBecause);
      return { kind: 'scan' };
    }
    // Without a sample (the database refused it), every gram: slower, equally exact.
    return { kind: 'grams', ...chooseGrams(grams, await sample()), ...(pending ? { pending } : {}) };
  };
}

/** The search's clauses for a plan: the same regexes either way, so results never change. */
export function searchClauses(words: readonly string[], plan: SearchPlan): Filter<ProductDoc>[] {
  const matches = words.map(wordMatch);
  return plan.kind === 'grams' ? [{ search_grams: { $all: plan.grams } }, ...matches] : matches;
}

/**
 * Rows of the collection a page may walk in id order before the index is asked instead. A word
 * dense enough to fill a page within them (a common word's first pages) is served by that walk,
 * which stops at the page's last match; the index would have to fetch and sort every candidate.
 * A rarer word costs this many rows once more (docs/benchmarks.md, "Search").
 */
export const WALK_BUDGET = 2_000;

/**
 * Whether the walk may find `rows` matches: not when the sample says the grams' candidates (an
 * upper bound of the matches) are expected fewer than half of them within WALK_BUDGET rows.
 * Then the walk is skipped; a wrong guess costs time, never results.
 */
export function walkMayFill(plan: SearchPlan, rows: number): boolean {
  return plan.kind === 'grams' && (plan.share === undefined || plan.share * WALK_BUDGET >= rows / 2);
}
