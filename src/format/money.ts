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

/** Intl formats a decimal string exactly (no float rounding). */
function formatDecimal(formatter: Intl.NumberFormat, decimal: string): string {
  return formatter.format(decimal as Intl.StringNumericLiteral);
}

/** Currency symbol plus grouped amount with two decimals: `$1,025.50`, `€25.00`. */
export function formatCurrency(minor: number, currency: string, locale: string): string {
  return formatDecimal(cachedFormat(locale, currency), minorToDecimalString(minor));
}

/** Grouped two-decimal notation of the locale, no symbol: `1,025.50`. */
export function formatLocalizedDecimal(minor: number, locale: string): string {
  return formatDecimal(cachedFormat(locale, null), minorToDecimalString(minor));
}
