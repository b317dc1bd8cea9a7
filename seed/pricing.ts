/**
 * The seed data's pricing rules, shared by the hand-written fixtures and the generator so both
 * follow the same arithmetic. All amounts are integer minor units; every currency the store
 * sells has two fraction digits.
 */

/** Fixed exchange rates: the value of one unit of each currency in ten-thousandths of a US dollar. */
export const USD_RATES = {
  USD: 10_000,
  EUR: 10_800,
  GBP: 12_700,
  CAD: 7_300,
  AUD: 6_600,
} as const;

export type SeedCurrency = keyof typeof USD_RATES;

export const SEED_CURRENCIES = Object.keys(USD_RATES) as SeedCurrency[];

/** Percentage charged on the converted part of an order (items priced in another currency). */
export const CONVERSION_FEE_PERCENT = 2;

/** Converts minor units between currencies at the fixed rates, rounded to the nearest minor unit. */
export function convertMinor(amount: number, from: SeedCurrency, to: SeedCurrency): number {
  if (from === to) return amount;
  return Math.round((amount * USD_RATES[from]) / USD_RATES[to]);
}

/** Selling price of a product whose face value is discounted by `discountPercentage`. */
export function discountedPrice(faceValue: number, discountPercentage: number): number {
  return Math.round((faceValue * (100 - discountPercentage)) / 100);
}

/** Fee on the sum of the order's item totals that were converted from another currency. */
export function conversionFee(convertedTotal: number): number {
  return Math.round((convertedTotal * CONVERSION_FEE_PERCENT) / 100);
}
