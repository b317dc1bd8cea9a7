import { describe, expect, it } from 'vitest';
import { assertConformsToOpenApi } from '../support/openapi-conformance';

const JSON_UTF8 = { 'content-type': 'application/json; charset=utf-8' };

function productMoney(minor: number) {
  const decimal = (minor / 100).toFixed(2);
  return {
    amount: String(minor),
    currency: 'USD',
    formatted: `$${Number(decimal).toLocaleString('en-US', { minimumFractionDigits: 2 })}`,
    decimal,
    localized_decimal: Number(decimal).toLocaleString('en-US', { minimumFractionDigits: 2 }),
  };
}

function product(id: number) {
  return {
    id,
    name: `Gift Card ${id}`,
    url: `https://shop.example.com/products/gift-card-${id}`,
    description: 'A gift card.',
    short_description: 'Gift card',
    notes: id % 2 === 0 ? null : 'Delivered by e-mail.',
    category_name: 'Gift Cards',
    brand_name: 'Acme',
    brand_id: 'acme',
    images: ['https://shop.example.com/images/1.png'],
    region: 'US',
    channel: 'API',
    tags: [],
    isPermanentOutOfStock: false,
    discount_percentage: 0,
    variant: {
      id: id * 10,
      name: '$1,025.50',
      price: productMoney(102550),
      face_value: productMoney(102550),
    },
    created_at: '2026-03-14T09:26:53+00:00',
    updated_at: '2026-03-14T09:26:53+00:00',
  };
}

function productPage() {
  return {
    data: [product(1), product(2)],
    links: {
      first: 'https://shop.example.com/api/v1/products?per_page=2&page=1',
      last: 'https://shop.example.com/api/v1/products?per_page=2&page=3',
      prev: null,
      next: 'https://shop.example.com/api/v1/products?per_page=2&page=2',
    },
    meta: { current_page: 1, from: 1, last_page: 3, per_page: 2, to: 2, total: 5 },
  };
}

const LIST = '/api/v1/products';
const ORDER = '/api/v1/orders/{order}';

describe('assertConformsToOpenApi', () => {
  it('accepts a valid product page', () => {
    expect(() => assertConformsToOpenApi('GET', LIST, 200, JSON_UTF8, productPage())).not.toThrow();
    expect(() =>
      assertConformsToOpenApi('get', '/api/v1/products/search', 200, new Headers(JSON_UTF8), productPage()),
    ).not.toThrow();
  });

  it('accepts an empty page past the end, with null positions', () => {
    const page = {
      ...productPage(),
      data: [],
      meta: { ...productPage().meta, current_page: 9, from: null, to: null },
    };
    expect(() => assertConformsToOpenApi('GET', LIST, 200, JSON_UTF8, page)).not.toThrow();
  });

  it('rejects an invalid product page, naming what is wrong', () => {
    const page = productPage();
    const [first] = page.data as Record<string, unknown>[];
    first!._id = '65f2a1';
    first!.created_at = '2026-03-14T09:26:53.000Z';
    (first!.variant as { price: { amount: string } }).price.amount = '1025.50';
    delete (page.meta as Partial<typeof page.meta>).total;

    let message = '';
    try {
      assertConformsToOpenApi('GET', LIST, 200, JSON_UTF8, page);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('body does not match the response schema');
    expect(message).toContain('/data/0 must NOT have additional properties');
    expect(message).toContain('"additionalProperty":"_id"');
    expect(message).toContain('/data/0/created_at must match pattern');
    expect(message).toContain('/data/0/variant/price/amount must match pattern');
    expect(message).toContain("/meta must have required property 'total'");
  });

  it('rejects nulls and types the contract does not allow', () => {
    const page = productPage();
    (page.links as Record<string, unknown>).first = null;
    (page.data[0] as Record<string, unknown>).notes = undefined;
    (page.meta as Record<string, unknown>).per_page = 101;
    expect(() => assertConformsToOpenApi('GET', LIST, 200, JSON_UTF8, page)).toThrow(
      /\/links\/first must be string[\s\S]*\/meta\/per_page must be <= 100/,
    );
  });

  it('checks status, content type and charset', () => {
    expect(() => assertConformsToOpenApi('GET', LIST, 418, JSON_UTF8, {})).toThrow(
      /status 418 is not documented/,
    );
    expect(() => assertConformsToOpenApi('POST', LIST, 200, JSON_UTF8, {})).toThrow(/no operation POST/);
    expect(() =>
      assertConformsToOpenApi(
        'GET',
        LIST,
        200,
        { 'content-type': 'text/html; charset=utf-8' },
        productPage(),
      ),
    ).toThrow(/Content-Type text\/html; charset=utf-8 is not documented/);
    expect(() =>
      assertConformsToOpenApi('GET', LIST, 200, { 'Content-Type': 'application/json' }, productPage()),
    ).toThrow(/must say charset=utf-8/);
  });

  it('checks the fixed error messages and the documented headers', () => {
    const unauthenticated = { ...JSON_UTF8, 'www-authenticate': 'Bearer' };
    expect(() =>
      assertConformsToOpenApi('GET', ORDER, 401, unauthenticated, { message: 'Unauthenticated.' }),
    ).not.toThrow();
    expect(() =>
      assertConformsToOpenApi('GET', ORDER, 401, JSON_UTF8, { message: 'Unauthenticated.' }),
    ).toThrow(/required header WWW-Authenticate is missing/);
    expect(() =>
      assertConformsToOpenApi('GET', ORDER, 401, unauthenticated, { message: 'Unauthorized' }),
    ).toThrow(/\/message must be equal to constant/);
    expect(() =>
      assertConformsToOpenApi('GET', ORDER, 404, JSON_UTF8, { message: 'Order not found.' }),
    ).not.toThrow();
    expect(() =>
      assertConformsToOpenApi(
        'GET',
        ORDER,
        503,
        { ...JSON_UTF8, 'Retry-After': '5' },
        { message: 'Service Unavailable.' },
      ),
    ).not.toThrow();
    expect(() =>
      assertConformsToOpenApi('GET', ORDER, 500, JSON_UTF8, { message: 'Server Error.', stack: 'at x' }),
    ).toThrow(/must NOT have additional properties/);
  });

  it('checks validation errors', () => {
    const body = {
      message: 'The term field is required.',
      errors: { term: ['The term field is required.'] },
    };
    expect(() =>
      assertConformsToOpenApi('GET', '/api/v1/products/search', 422, JSON_UTF8, body),
    ).not.toThrow();
    expect(() =>
      assertConformsToOpenApi('GET', '/api/v1/products/search', 422, JSON_UTF8, {
        ...body,
        errors: { term: 'x' },
      }),
    ).toThrow(/\/errors\/term must be array/);
  });
});
