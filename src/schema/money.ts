import type { MoneyDoc } from '../db/documents';
import {
  formatCurrency,
  formatLocalizedDecimal,
  minorToDecimalString,
  minorToMajorNumber,
} from '../format/money';
import { builder } from './builder';

export const ProductMoney = builder.objectRef<MoneyDoc>('ProductMoney').implement({
  description: 'A product price. Every member is a string, as on /api/v1.',
  fields: (t) => ({
    amount: t.string({
      description: 'Digits only: the amount in minor currency units, e.g. "102550".',
      resolve: (money) => String(money.amount),
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code.' }),
    formatted: t.string({
      description: 'Display string with currency symbol, grouping and two decimals, e.g. "$1,025.50".',
      resolve: (money, _args, ctx) => formatCurrency(money.amount, money.currency, ctx.storeLocale),
    }),
    decimal: t.string({
      description: 'Decimal amount with two fraction digits and no grouping, e.g. "1025.50".',
      resolve: (money) => minorToDecimalString(money.amount),
    }),
    localizedDecimal: t.string({
      description: 'Grouped two-decimal notation of the store\'s locale, e.g. "1,025.50".',
      resolve: (money, _args, ctx) => formatLocalizedDecimal(money.amount, ctx.storeLocale),
    }),
  }),
});

export const OrderMoney = builder.objectRef<MoneyDoc>('OrderMoney').implement({
  description: 'An order amount in the order currency.',
  fields: (t) => ({
    amount: t.float({
      description: 'Decimal amount in major currency units, e.g. 1025.5.',
      resolve: (money) => minorToMajorNumber(money.amount),
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code.' }),
    formatted: t.string({
      description: 'Display string with currency symbol and two decimals, e.g. "$1,025.50".',
      resolve: (money, _args, ctx) => formatCurrency(money.amount, money.currency, ctx.storeLocale),
    }),
  }),
});
