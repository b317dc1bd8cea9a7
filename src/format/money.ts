/**
 * Money formatting from integer minor units. Every currency the store sells has two fraction
 * digits, so the decimal string is built from integers and never passes through a float.
 */

export function minorToDecimalString(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`money amount ${minor} is not an integer`);
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor)).padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

export function minorToMajorNumber(minor: number): number {
  return Number(minorToDecimalString(minor));
}

const formatters = new Map<string, Intl.NumberFormat>();

function cachedFormat(locale: string, currency: string | null): Intl.NumberFormat {
  const key = `${locale}|${currency ?? ''}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.NumberFormat(locale, {
      ...(currency ? { style: 'currency', currency, currencyDisplay: 'symbol' } : {}),
      minimumFractionDigits: 2,
      maximumFractionDigits: 2,
      useGrouping: true,
    });
    formatters.set(key, formatter);
  }
  return formatter;
}

/**
 * Intl formats a decimal string exactly (no float rounding) but costs microseconds a call, and a
 * catalogue repeats few distinct prices, so results are memoised (bounded: cleared when full).
 */
const formatted = new Map<string, string>();
const MAX_MEMOISED = 50_000;

function formatMinor(minor: number, locale: string, currency: string | null): string {
  const key = `${locale}|${currency ?? ''}|${minor}`;
  let text = formatted.get(key);
  if (text === undefined) {
    text = cachedFormat(locale, currency).format(minorToDecimalString(minor) as Intl.StringNumericLiteral);
    if (formatted.size >= MAX_MEMOISED) formatted.clear();
    formatted.set(key, text);
  }
  return text;
}

/** Currency symbol plus grouped amount with two decimals: `$1,025.50`, `€25.00`. */
export function formatCurrency(minor: number, currency: string, locale: string): string {
  return formatMinor(minor, locale, currency);
}

/** Grouped two-decimal notation of the locale, no symbol: `1,025.50`. */
export function formatLocalizedDecimal(minor: number, locale: string): string {
  return formatMinor(minor, locale, null);
}
