import { createLane, type LaneLimits } from './admission';
import type { ProductCriteria } from '../catalog/product-plans';
import { searchGrams } from '../catalog/product-search';

/**
 * Which admission lane (src/db/guards/admission.ts) a repository call waits in. Lookups by key have
 * their own, so pages cannot starve an order or a node; searches of words too short for a gram
 * (1–2 characters: a scan of every product whatever the page) have theirs, narrow, so they cannot
 * take the turns of ordinary pages: at 100,000 products one anonymous client's short searches held
 * 0.44 of a database core (issue 36, row 12). That lane keeps the database busy at most
 * `scanShare` of the time after a burst of a second (src/db/guards/busy-budget.ts): whatever the
 * clients, the process's short-word scans hold at most that share of a database core. Past that lane's queue, or an expected wait
 * over the lane's bound, they are answered 503 with `Retry-After` at once, like any full lane.
 */

/** Database time short-word scans may take at once before the lane's share applies: a few scans. */
const WORD_SCAN_BURST_MS = 1_000;

/** Repository methods that read a few documents by an indexed key: the lookup lane. */
const LOOKUPS = new Set(['findByUlid', 'findByIds', 'findByItemIds', 'findByVariantIds']);

/** Criteria that search only by words no gram index can serve: every product is read. */
export function isWordScan(value: unknown): boolean {
  const words = (value as Partial<ProductCriteria> | undefined)?.words;
  return Array.isArray(words) && words.length > 0 && searchGrams(words).length === 0;
}

export function createQueryLanes(limits: LaneLimits, scans: number, scanShare = 1) {
  const lanes = {
    lookup: createLane('lookup', limits),
    scan: createLane('scan', limits),
    wordScan: createLane('word-scan', {
      ...limits,
      concurrency: scans,
      busyShare: scanShare,
      busyBurstMs: WORD_SCAN_BURST_MS,
    }),
  };
  return {
    lanes,
    laneOf: (method: string, args: readonly unknown[]) =>
      LOOKUPS.has(method) ? lanes.lookup : isWordScan(args[0]) ? lanes.wordScan : lanes.scan,
  };
}
