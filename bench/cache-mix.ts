/** The read mix of the cache benches (bench/cache-hit-ratio.ts, bench/cache-under-writes.ts). */

export const REQUESTS = 600;

export const DISTINCT_PATHS = [
  ...Array.from({ length: 7 }, (_, page) => `/api/v1/products?per_page=3&page=${page + 1}`),
  ...['gift', 'card', 'game'].map((term) => `/api/v1/products/search?term=${term}`),
  ...Array.from(
    { length: 5 },
    (_, size) =>
      `/graphql?query=${encodeURIComponent(`{ products(first: ${size + 1}) { edges { node { name } } } }`)}`,
  ),
  `/graphql?query=${encodeURIComponent('{ categories { name productCount } }')}`,
];

/** A fixed, skewed mix (the first pages are asked most), the same for every configuration. */
export function requestMix(): string[] {
  let state = 42;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from(
    { length: REQUESTS },
    () => DISTINCT_PATHS[Math.floor(next() ** 2 * DISTINCT_PATHS.length)]!,
  );
}
