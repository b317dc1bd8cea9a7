/**
 * Which of a search's grams the index should read. Any subset of them selects a superset of the
 * matches and the regexes still decide, so the choice changes the cost of a search, never its
 * results. Reading a gram's entries costs time in proportion to how common the gram is; every
 * candidate the grams let through costs a row fetched and checked. So the rarest gram comes first,
 * and another is added only while it removes more candidates than its entries cost.
 */

/** Which grams a random sample of products carries: the only statistics the choice needs. */
export interface GramSample {
  /** Products in the sample. */
  size: number;
  /** For every gram seen, the sampled products (0 … size - 1) that carry it, ascending. */
  carriers: ReadonlyMap<string, Uint16Array>;
}

/** Bounds on what one sampled product may add: a product written by another system is not trusted. */
const MAX_SAMPLE_SIZE = 10_000;
const MAX_GRAMS_PER_PRODUCT = 1_000;
const MAX_GRAM_LENGTH = 16;

/** A sample from each product's stored `search_grams` (anything that is not a list of short strings is skipped). */
export function sampleOf(gramLists: readonly unknown[]): GramSample {
  const lists = gramLists.slice(0, MAX_SAMPLE_SIZE);
  const carriers = new Map<string, number[]>();
  lists.forEach((list, product) => {
    if (!Array.isArray(list)) return;
    for (const gram of new Set(list.slice(0, MAX_GRAMS_PER_PRODUCT))) {
      if (typeof gram !== 'string' || gram.length > MAX_GRAM_LENGTH) continue;
      let products = carriers.get(gram);
      if (!products) carriers.set(gram, (products = []));
      products.push(product);
    }
  });
  return {
    size: lists.length,
    carriers: new Map([...carriers].map(([gram, products]) => [gram, Uint16Array.from(products)])),
  };
}

/**
 * What reading one index entry costs against fetching and checking one candidate row (measured
 * on the embedded engine at 1,000,000 products: ~0.2 µs per entry, ~1.6 µs per candidate).
 */
const ENTRY_COST = 0.12;
/** A `$all` of more grams than this gains nothing measurable. */
const MAX_CHOSEN = 6;

export interface GramChoice {
  /** In sorted order; never empty when the search has grams. */
  grams: string[];
  /** The estimated share of products carrying all of them (their candidates); unknown without a sample. */
  share?: number;
}

/**
 * The grams to read, chosen greedily by estimated cost (entries read + candidates left). Without
 * a sample, every gram.
 */
export function chooseGrams(grams: readonly string[], sample: GramSample | undefined): GramChoice {
  const distinct = [...new Set(grams)].sort();
  if (!sample || sample.size === 0 || distinct.length === 0) return { grams: distinct };
  // Smoothed shares: a gram missing from the sample is rare, not absent.
  const share = (count: number) => (count + 0.5) / (sample.size + 1);
  const none = new Uint16Array(0);
  const alive = new Uint8Array(sample.size).fill(1);
  let entries = 0;
  let cost = Infinity;
  let candidates = share(sample.size);
  const chosen: string[] = [];
  const left = new Set(distinct);
  while (left.size > 0 && chosen.length < MAX_CHOSEN) {
    let best: { gram: string; cost: number; carriers: Uint16Array; kept: number } | undefined;
    for (const gram of left) {
      const carriers = sample.carriers.get(gram) ?? none;
      let kept = 0;
      for (const product of carriers) kept += alive[product]!;
      const next = ENTRY_COST * (entries + share(carriers.length)) + share(kept);
      if (!best || next < best.cost) best = { gram, cost: next, carriers, kept };
    }
    if (!best || best.cost >= cost) break;
    chosen.push(best.gram);
    left.delete(best.gram);
    cost = best.cost;
    candidates = share(best.kept);
    entries += share(best.carriers.length);
    const carrying = new Uint8Array(sample.size);
    for (const product of best.carriers) carrying[product] = 1;
    for (let product = 0; product < sample.size; product++)
      alive[product] = alive[product]! & carrying[product]!;
  }
  return { grams: chosen.sort(), share: candidates };
}
