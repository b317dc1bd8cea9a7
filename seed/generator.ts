import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import type {
  FulfillmentStatus,
  OrderDoc,
  OrderItemDoc,
  PaymentStatus,
  ProductDoc,
} from '../src/db/documents';
import { conversionFee, convertMinor, discountedPrice, type SeedCurrency } from './pricing';

/**
 * Deterministic bulk data: realistic digital goods from fictional brands, and orders of them.
 *
 * - Every document is a pure function of (seed, id): its own PRNG (pure-rand xoroshiro128+) is
 *   seeded from a hash of both. The same arguments give byte-identical output whatever the batch
 *   size, and an order item can re-derive the product it refers to without keeping the catalogue
 *   in memory. Only order item ids are a running counter (they are contiguous).
 * - Timestamps come from fixed base dates plus PRNG offsets, in whole seconds; never the clock.
 * - ULIDs are built from the order's creation time plus PRNG characters; their last seven
 *   characters are a bijection of the order id, so they are unique by construction.
 * - Ids start at 1 by default: generated data is its own data set, loaded into emptied
 *   collections. To add it next to the fixtures, pass start ids above the fixtures' (see
 *   seed/load.ts, `withFixtures`). Variant ids are always VARIANT_ID_OFFSET + product id, which
 *   stays clear of the fixtures' variant ids.
 * - Nothing generated contains `*` or `$`, so searches for `.*` or `$where` match nothing.
 */

export const MAX_BATCH_SIZE = 5000;
export const DEFAULT_BATCH_SIZE = 2000;
export const VARIANT_ID_OFFSET = 10_000_000;

const PRODUCT_BASE_SECONDS = Date.UTC(2024, 0, 1) / 1000;
const ORDER_BASE_SECONDS = Date.UTC(2025, 0, 1) / 1000;
/** Creation times advance with the id, so newer ids are newer documents (as in a real store). */
const PRODUCT_SPACING_SECONDS = 30;
const ORDER_SPACING_SECONDS = 30;
const DAY = 86_400;

// ------------------------------------------------------------------------------ randomness

function fmix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const PRODUCT_STREAM = 0x50524f44; // "PROD"
const ORDER_STREAM = 0x4f524452; // "ORDR"

function streamKey(seed: number, stream: number): number {
  return fmix32(fmix32(seed ^ stream) ^ Math.floor(seed / 0x1_0000_0000));
}

/** A fresh PRNG for one document. `key` already mixes the seed and the kind of document. */
function documentRng(key: number, id: number): RandomGenerator {
  const rng = xoroshiro128plus(fmix32(fmix32(key ^ id) ^ Math.floor(id / 0x1_0000_0000)));
  rng.next();
  rng.next();
  return rng;
}

function int(rng: RandomGenerator, from: number, to: number): number {
  return uniformInt(rng, from, to);
}

/**
 * A customer rank from 1 to `pool`, Zipf-like (P(rank <= k) = ln(k + 1) / ln(pool + 1)): a few
 * customers order very often and most rarely, as in a real shop. One PRNG draw, like a uniform pick.
 */
function zipfRank(rng: RandomGenerator, pool: number): number {
  const unit = uniformInt(rng, 0, 0x3fff_ffff) / 0x4000_0000;
  return Math.min(pool, Math.floor((pool + 1) ** unit));
}

function chance(rng: RandomGenerator, percent: number): boolean {
  return uniformInt(rng, 0, 99) < percent;
}

function pick<T>(rng: RandomGenerator, items: readonly T[]): T {
  return items[uniformInt(rng, 0, items.length - 1)] as T;
}

function weighted<T>(rng: RandomGenerator, choices: readonly (readonly [T, number])[]): T {
  const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = uniformInt(rng, 0, total - 1);
  for (const [value, weight] of choices) {
    if (roll < weight) return value;
    roll -= weight;
  }
  return (choices[choices.length - 1] as readonly [T, number])[0];
}

/** `count` distinct entries of `items`, in the pool's order. */
function sample<T>(rng: RandomGenerator, items: readonly T[], count: number): T[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, items.length)) chosen.add(uniformInt(rng, 0, items.length - 1));
  return [...chosen].sort((a, b) => a - b).map((index) => items[index] as T);
}

// ------------------------------------------------------------------------------ catalogue

interface Region {
  code: string;
  currency: SeedCurrency;
}

const REGIONS = {
  US: { code: 'US', currency: 'USD' },
  EU: { code: 'EU', currency: 'EUR' },
  DE: { code: 'DE', currency: 'EUR' },
  FR: { code: 'FR', currency: 'EUR' },
  UK: { code: 'UK', currency: 'GBP' },
  CA: { code: 'CA', currency: 'CAD' },
  AU: { code: 'AU', currency: 'AUD' },
  Global: { code: 'Global', currency: 'USD' },
} as const satisfies Record<string, Region>;

type Kind = 'gift' | 'credit' | 'software' | 'subscription';

interface Brand {
  name: string;
  kind: Kind;
  regions: readonly Region[];
  /** Gift cards: what the card buys. Game credit: the currency's name. Software/subscriptions: product lines. */
  detail: readonly string[];
  tags: readonly string[];
}

const CATEGORY_OF: Record<Kind, string> = {
  gift: 'Gift Cards',
  credit: 'Game Credit',
  software: 'Software',
  subscription: 'Subscriptions',
};

const { US, EU, DE, FR, UK, CA, AU, Global } = REGIONS;

const BRANDS: readonly Brand[] = [
  {
    name: 'Northwind Market',
    kind: 'gift',
    regions: [US, CA],
    detail: ['groceries and household goods'],
    tags: ['groceries', 'household'],
  },
  {
    name: 'Lumen Books',
    kind: 'gift',
    regions: [UK, US, AU],
    detail: ['books, ebooks and audiobooks'],
    tags: ['books', 'reading'],
  },
  {
    name: 'Atlas Outfitters',
    kind: 'gift',
    regions: [EU, DE, US],
    detail: ['outdoor and travel gear'],
    tags: ['outdoor', 'travel'],
  },
  {
    name: 'Maple Street Café',
    kind: 'gift',
    regions: [FR, CA],
    detail: ['coffee, pastries and lunch'],
    tags: ['café', 'coffee', 'food'],
  },
  {
    name: 'Harbor & Pine',
    kind: 'gift',
    regions: [US, UK],
    detail: ['home goods and furniture'],
    tags: ['home', 'furniture'],
  },
  {
    name: 'Cobalt Electronics',
    kind: 'gift',
    regions: [US, DE, AU],
    detail: ['electronics and appliances'],
    tags: ['electronics', 'tech'],
  },
  {
    name: 'Velvet Thread',
    kind: 'gift',
    regions: [UK, FR, EU],
    detail: ['fashion and accessories'],
    tags: ['fashion', 'clothing'],
  },
  {
    name: 'Pixelforge',
    kind: 'credit',
    regions: [Global, EU, UK],
    detail: ['Gems'],
    tags: ['gems', 'mobile'],
  },
  {
    name: 'Starhold Arena',
    kind: 'credit',
    regions: [EU, US, Global],
    detail: ['Crowns'],
    tags: ['pc', 'console'],
  },
  {
    name: 'Crystal Quest Online',
    kind: 'credit',
    regions: [UK, EU, US],
    detail: ['Shards'],
    tags: ['mmo', 'pc'],
  },
  {
    name: 'Nebula Play',
    kind: 'credit',
    regions: [UK, US, AU, CA],
    detail: ['Credits'],
    tags: ['console', 'wallet'],
  },
  {
    name: 'Ironclad Tactics',
    kind: 'credit',
    regions: [Global, DE],
    detail: ['Medals'],
    tags: ['strategy', 'pc'],
  },
  {
    name: 'Rift Runners',
    kind: 'credit',
    regions: [Global, AU],
    detail: ['Coins'],
    tags: ['mobile', 'racing'],
  },
  {
    name: 'DevForge',
    kind: 'software',
    regions: [Global, US],
    detail: ['Rust Studio', 'Web Studio', 'Data Studio'],
    tags: ['developer', 'ide'],
  },
  {
    name: 'ShieldNet',
    kind: 'software',
    regions: [EU, US, UK],
    detail: ['Antivirus Plus', 'Total Security'],
    tags: ['security', 'antivirus'],
  },
  {
    name: 'Papertrail',
    kind: 'software',
    regions: [UK, US, DE],
    detail: ['Office Home', 'Office Business'],
    tags: ['office', 'productivity'],
  },
  {
    name: 'Vectorly',
    kind: 'software',
    regions: [US, EU],
    detail: ['Design Suite', 'Photo Editor'],
    tags: ['design', 'photo'],
  },
  {
    name: 'CloudLocker',
    kind: 'software',
    regions: [US, CA, AU],
    detail: ['Backup', 'Sync'],
    tags: ['backup', 'cloud'],
  },
  {
    name: 'Soundwave',
    kind: 'subscription',
    regions: [EU, US, UK],
    detail: ['Premium', 'Family', 'Student'],
    tags: ['music', 'streaming'],
  },
  {
    name: 'StreamNest',
    kind: 'subscription',
    regions: [UK, US, CA],
    detail: ['Basic', 'Standard', 'Family'],
    tags: ['video', 'streaming'],
  },
  {
    name: 'Fitloop',
    kind: 'subscription',
    regions: [US, AU],
    detail: ['Plus', 'Coach'],
    tags: ['fitness', 'health'],
  },
  {
    name: 'Wordsmith',
    kind: 'subscription',
    regions: [US, UK, EU],
    detail: ['Pro', 'Teams'],
    tags: ['writing', 'productivity'],
  },
  {
    name: 'Orbit VPN',
    kind: 'subscription',
    regions: [CA, US, EU, Global],
    detail: ['Standard', 'Ultra'],
    tags: ['vpn', 'privacy'],
  },
];

/** Tags any brand of the kind may carry, after its own. */
const KIND_TAGS: Record<Kind, readonly string[]> = {
  gift: ['gift', 'birthday', 'holiday', 'bestseller'],
  credit: ['🎮', 'gaming', 'top-up', 'bestseller'],
  software: ['license', 'windows', 'macos', 'bestseller'],
  subscription: ['family', 'student', 'gift', 'bestseller'],
};

const NOTES: Record<Kind, readonly string[]> = {
  gift: [
    'Redeemable in the issuing region only.',
    'The balance never expires.',
    'Cannot be exchanged for cash.',
  ],
  credit: [
    'Credited to the account region of the code.',
    'Bonus amounts are included in the amount shown.',
    'Requires an account with the publisher.',
  ],
  software: [
    'Download link is sent by email within 15 minutes.',
    'Not refundable once the key has been revealed.',
    'Activation requires an internet connection.',
  ],
  subscription: [
    'New subscribers only.',
    'Cannot be combined with other offers.',
    'Renews manually: no card is stored.',
  ],
};

const GIFT_DENOMINATIONS = [10, 15, 20, 25, 30, 50, 75, 100, 150, 200, 250, 500];
/** Game credit packs: amount of in-game currency and the USD price in cents. */
const CREDIT_PACKS = [
  [500, 499],
  [1000, 999],
  [2800, 2499],
  [5500, 4999],
  [13500, 9999],
  [30000, 19999],
] as const;
const SOFTWARE_EDITIONS = [
  ['Standard', 3999],
  ['Professional', 8999],
  ['Enterprise', 24999],
] as const;
const SOFTWARE_TERMS = [
  ['1 year', 1],
  ['2 years', 2],
  ['perpetual', 3],
] as const;
const SEATS = [1, 3, 5, 10] as const;
const SUBSCRIPTION_TIER_USD_MONTHLY = [699, 999, 1499, 1999] as const;
const SUBSCRIPTION_MONTHS = [1, 3, 6, 12, 24] as const;

function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

const BRAND_IDS = new Map(
  BRANDS.map((brand) => [brand.name, `brd_${slugify(brand.name).replace(/-/g, '_')}`]),
);
const TAG_POOLS = new Map(BRANDS.map((brand) => [brand.name, [...brand.tags, ...KIND_TAGS[brand.kind]]]));

function grouped(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A price in `currency` from a USD list price, ending in 99 minor units like a real price list. */
function listPrice(usdMinor: number, currency: SeedCurrency): number {
  const converted = convertMinor(usdMinor, 'USD', currency);
  return Math.max(99, Math.round(converted / 100) * 100 - 1);
}

interface Offer {
  name: string;
  variantName: string;
  faceValue: number;
  description: string;
  shortDescription: string;
}

function offerFor(rng: RandomGenerator, brand: Brand, region: Region): Offer {
  const currency = region.currency;
  switch (brand.kind) {
    case 'gift': {
      const amount = pick(rng, GIFT_DENOMINATIONS);
      return {
        name: `${brand.name} Gift Card ${amount} ${currency}`,
        variantName: `${amount} ${currency}`,
        faceValue: amount * 100,
        description: `A digital gift card for ${brand.name}, good for ${brand.detail[0]} in the ${region.code} store and online. The balance can be spent over several purchases.`,
        shortDescription: `${brand.name} digital gift card worth ${amount} ${currency}.`,
      };
    }
    case 'credit': {
      const [units, usd] = pick(rng, CREDIT_PACKS);
      const unitName = brand.detail[0] as string;
      const label = `${grouped(units)} ${unitName}`;
      return {
        name: `${brand.name} ${label}`,
        variantName: label,
        faceValue: listPrice(usd, currency),
        description: `${label} for ${brand.name}. ${unitName} unlock characters, cosmetics and season passes on every platform.`,
        shortDescription: `${label} for ${brand.name}.`,
      };
    }
    case 'software': {
      const line = pick(rng, brand.detail);
      const [edition, editionUsd] = pick(rng, SOFTWARE_EDITIONS);
      const [term, termFactor] = pick(rng, SOFTWARE_TERMS);
      const seats = pick(rng, SEATS);
      const devices = seats === 1 ? '1 device' : `${seats} devices`;
      return {
        name: `${brand.name} ${line} ${edition}`,
        variantName: `${devices}, ${term}`,
        faceValue: listPrice(editionUsd * termFactor * (seats === 1 ? 1 : Math.ceil(seats / 2)), currency),
        description: `${brand.name} ${line} ${edition} for ${devices}, ${term === 'perpetual' ? 'with a perpetual licence' : `for ${term}`}. Delivered as a licence key.`,
        shortDescription: `${brand.name} ${line} ${edition} key, ${devices}, ${term}.`,
      };
    }
    case 'subscription': {
      const tierIndex = int(rng, 0, brand.detail.length - 1);
      const tier = brand.detail[tierIndex] as string;
      const months = pick(rng, SUBSCRIPTION_MONTHS);
      const monthly = SUBSCRIPTION_TIER_USD_MONTHLY[tierIndex] ?? 999;
      const period = months === 1 ? '1 month' : `${months} months`;
      return {
        name: `${brand.name} ${tier} (${period})`,
        variantName: period,
        faceValue: listPrice(monthly * months, currency),
        description: `${period} of ${brand.name} ${tier}. Activate the code in your ${brand.name} account; the time adds to any running plan.`,
        shortDescription: `${brand.name} ${tier} subscription for ${period}.`,
      };
    }
  }
}

/** The product with this id for this seed: the same every time it is asked for. */
export function generateProduct(seed: number, id: number): ProductDoc {
  const rng = documentRng(streamKey(seed, PRODUCT_STREAM), id);
  const brand = pick(rng, BRANDS);
  const region = pick(rng, brand.regions);
  const offer = offerFor(rng, brand, region);
  const discount = chance(rng, 70) ? 0 : pick(rng, [5, 10, 15, 20, 25, 30]);
  const slug = `${slugify(offer.name)}-${id}`;
  const imageCount = weighted(rng, [
    [1, 50],
    [2, 30],
    [3, 15],
    [4, 5],
  ]);
  const tagCount = weighted(rng, [
    [0, 20],
    [1, 30],
    [2, 30],
    [3, 15],
    [4, 5],
  ]);
  const created = PRODUCT_BASE_SECONDS + (id - 1) * PRODUCT_SPACING_SECONDS + int(rng, 0, 29);
  const updated = chance(rng, 40) ? created : created + int(rng, 60, 180 * DAY);
  return {
    id,
    name: offer.name,
    url: `https://store.example.com/products/${slug}`,
    description: offer.description,
    short_description: offer.shortDescription,
    notes: chance(rng, 35) ? pick(rng, NOTES[brand.kind]) : null,
    category_name: CATEGORY_OF[brand.kind],
    category_key: CATEGORY_OF[brand.kind].toLowerCase(),
    brand_name: brand.name,
    brand_id: BRAND_IDS.get(brand.name) as string,
    images: Array.from(
      { length: imageCount },
      (_, index) => `https://cdn.example.com/products/${slug}/${index + 1}.jpg`,
    ),
    region: region.code,
    channel: chance(rng, 75) ? 'API' : 'Non API',
    tags: sample(rng, TAG_POOLS.get(brand.name) as string[], tagCount),
    is_permanent_out_of_stock: chance(rng, 3),
    discount_percentage: discount,
    variant: {
      id: VARIANT_ID_OFFSET + id,
      name: offer.variantName,
      price: { amount: discountedPrice(offer.faceValue, discount), currency: region.currency },
      face_value: { amount: offer.faceValue, currency: region.currency },
    },
    created_at: new Date(created * 1000),
    updated_at: new Date(updated * 1000),
  };
}

// ------------------------------------------------------------------------------ batching

function checkCount(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`${name} must be an integer of at least ${min}, got ${value}`);
  }
}

function checkBatchSize(batchSize: number): void {
  checkCount('batchSize', batchSize, 1);
  if (batchSize > MAX_BATCH_SIZE) throw new RangeError(`batchSize must be at most ${MAX_BATCH_SIZE}`);
}

function checkSeed(seed: number): void {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be a non-negative integer`);
}

export interface ProductGeneratorOptions {
  seed: number;
  count: number;
  /** Id of the first product (default 1). */
  startId?: number;
  batchSize?: number;
}

/** Yields `count` products in batches of at most `batchSize`, ids ascending from `startId`. */
export function* generateProducts(
  options: ProductGeneratorOptions,
): Generator<ProductDoc[], void, undefined> {
  const { seed, count, startId = 1, batchSize = DEFAULT_BATCH_SIZE } = options;
  checkSeed(seed);
  checkCount('count', count, 0);
  checkCount('startId', startId, 1);
  checkBatchSize(batchSize);
  const end = startId + count;
  for (let first = startId; first < end; first += batchSize) {
    const last = Math.min(first + batchSize, end);
    const batch: ProductDoc[] = new Array(last - first);
    for (let id = first; id < last; id++) batch[id - first] = generateProduct(seed, id);
    yield batch;
  }
}

// ------------------------------------------------------------------------------ orders

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function encodeBase32(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let index = 0; index < length; index++) {
    out = CROCKFORD[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/** 48-bit millisecond time, nine PRNG characters, then seven characters that encode the id bijectively. */
function orderUlid(rng: RandomGenerator, timeMs: number, uniqueKey: number, id: number): string {
  let random = '';
  for (let index = 0; index < 9; index++) random += CROCKFORD[int(rng, 0, 31)];
  // fmix32 is a bijection on 32-bit values, so distinct ids (below 2^32) give distinct suffixes;
  // the three spare high bits of the 35-bit suffix come from the PRNG.
  const suffix = int(rng, 0, 7) * 0x1_0000_0000 + fmix32((id ^ uniqueKey) >>> 0);
  return encodeBase32(timeMs, 10) + random + encodeBase32(suffix, 7);
}

const FULFILLMENT_WEIGHTS: readonly (readonly [FulfillmentStatus, number])[] = [
  ['completed', 62],
  ['pending', 10],
  ['processing', 10],
  ['partially_fulfilled', 8],
  ['refunded', 10],
];

const ORDER_CURRENCIES: readonly (readonly [SeedCurrency, number])[] = [
  ['USD', 45],
  ['EUR', 25],
  ['GBP', 15],
  ['CAD', 8],
  ['AUD', 7],
];

export interface ProductRange {
  /** Id of the first product the orders can refer to. */
  startId: number;
  count: number;
}

export interface OrderGeneratorOptions {
  seed: number;
  count: number;
  /** Id of the first order (default 1). */
  startId?: number;
  /** Id of the first order item (default 1); item ids are contiguous across the orders. */
  startItemId?: number;
  /**
   * The generated products (same seed) the items are taken from, re-derived by id. Default: the
   * first 1000, whether or not they were inserted: items carry names and prices, not product ids.
   */
  products?: ProductRange;
  /**
   * Size of the customer pool: customer ids are cus_000001 ... (default 1000), ordering Zipf-like:
   * cus_000001 places about ln 2 / ln(pool + 1) of all orders (10% of a pool of 1000).
   */
  customers?: number;
  batchSize?: number;
}

interface OrderDraft {
  doc: OrderDoc;
  nextItemId: number;
}

function generateOrder(
  seed: number,
  id: number,
  firstItemId: number,
  products: ProductRange,
  customers: number,
): OrderDraft {
  const key = streamKey(seed, ORDER_STREAM);
  const rng = documentRng(key, id);
  const created =
    ORDER_BASE_SECONDS + (id - 1) * ORDER_SPACING_SECONDS + int(rng, 0, ORDER_SPACING_SECONDS - 1);
  const fulfillment = weighted(rng, FULFILLMENT_WEIGHTS);
  const payment: PaymentStatus =
    fulfillment === 'pending'
      ? chance(rng, 80)
        ? 'pending'
        : 'completed'
      : fulfillment === 'processing' && chance(rng, 30)
        ? 'pending'
        : 'completed';
  const updated =
    fulfillment === 'pending'
      ? created + int(rng, 0, 600)
      : fulfillment === 'refunded'
        ? created + int(rng, DAY, 30 * DAY)
        : created + int(rng, 30, 2 * DAY);
  const currency = weighted(rng, ORDER_CURRENCIES);
  const itemCount = weighted(rng, [
    [1, 60],
    [2, 28],
    [3, 12],
  ]);

  const items: OrderItemDoc[] = [];
  let subtotal = 0;
  let converted = 0;
  for (let index = 0; index < itemCount; index++) {
    const product = generateProduct(seed, products.startId + int(rng, 0, products.count - 1));
    const price = product.variant.price;
    const unitPrice = convertMinor(price.amount, price.currency as SeedCurrency, currency);
    const quantity = weighted(rng, [
      [1, 70],
      [2, 18],
      [3, 7],
      [5, 5],
    ]);
    const totalPrice = unitPrice * quantity;
    subtotal += totalPrice;
    if (price.currency !== currency) converted += totalPrice;
    items.push({
      id: firstItemId + index,
      product_name: product.name,
      variant_name: product.variant.name,
      quantity,
      unit_price: unitPrice,
      total_price: totalPrice,
      created_at: new Date(created * 1000),
      updated_at: new Date((chance(rng, 50) ? updated : created) * 1000),
    });
  }
  const fees = conversionFee(converted);
  const createdAt = new Date(created * 1000);
  return {
    doc: {
      id,
      ulid: orderUlid(rng, created * 1000 + int(rng, 0, 999), key, id),
      order_number: `ORD-${createdAt.getUTCFullYear()}-${String(id).padStart(6, '0')}`,
      customer_id: `cus_${String(zipfRank(rng, customers)).padStart(6, '0')}`,
      fulfillment_status: fulfillment,
      payment_status: payment,
      currency,
      subtotal,
      conversion_fees: fees,
      total: subtotal + fees,
      items,
      created_at: createdAt,
      updated_at: new Date(updated * 1000),
    },
    nextItemId: firstItemId + itemCount,
  };
}

/** Yields `count` orders in batches of at most `batchSize`, ids ascending from `startId`. */
export function* generateOrders(options: OrderGeneratorOptions): Generator<OrderDoc[], void, undefined> {
  const {
    seed,
    count,
    startId = 1,
    startItemId = 1,
    products = { startId: 1, count: 1000 },
    customers = 1000,
    batchSize = DEFAULT_BATCH_SIZE,
  } = options;
  checkSeed(seed);
  checkCount('count', count, 0);
  checkCount('startId', startId, 1);
  checkCount('startItemId', startItemId, 1);
  checkCount('products.startId', products.startId, 1);
  checkCount('products.count', products.count, 1);
  checkCount('customers', customers, 1);
  checkBatchSize(batchSize);
  if (startId + count > 0x1_0000_0000) throw new RangeError('order ids must stay below 2^32');
  const end = startId + count;
  let itemId = startItemId;
  for (let first = startId; first < end; first += batchSize) {
    const last = Math.min(first + batchSize, end);
    const batch: OrderDoc[] = new Array(last - first);
    for (let id = first; id < last; id++) {
      const draft = generateOrder(seed, id, itemId, products, customers);
      batch[id - first] = draft.doc;
      itemId = draft.nextItemId;
    }
    yield batch;
  }
}
