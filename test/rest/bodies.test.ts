import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, mintToken, startTestServer, type TestServer } from '../support/server';

/**
 * Full-body equality, byte for byte (field order included), against JSON written by hand from
 * seed/fixtures.ts — not captured from the server.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const CDN = 'https://cdn.example.com/products';

describe('GET /api/v1/orders/{order}', () => {
  it('returns order 6 exactly as the contract shapes it', async () => {
    const response = await server.request('/api/v1/orders/01KHZKA9ZFN7YB2GJ6VH8SE3PC', {
      headers: bearer(await mintToken({ sub: 'cus_bob' })),
    });
    const expected = {
      id: 6,
      ulid: '01KHZKA9ZFN7YB2GJ6VH8SE3PC',
      order_number: 'ORD-2026-000006',
      fulfillment_status: 'completed',
      payment_status: 'completed',
      subtotal: { amount: 1115.49, formatted: '$1,115.49' },
      conversion_fees: { amount: 0, formatted: '$0.00' },
      total: { amount: 1115.49, formatted: '$1,115.49' },
      currency: 'USD',
      items: [
        {
          id: 110,
          product_name: 'DevForge C++ Studio License',
          variant_name: '1 developer, perpetual',
          quantity: 1,
          unit_price: { amount: 1025.5, formatted: '$1,025.50' },
          total_price: { amount: 1025.5, formatted: '$1,025.50' },
          created_at: '2026-02-21T07:58:36+00:00',
          updated_at: '2026-02-21T08:01:12+00:00',
        },
        {
          id: 111,
          product_name: 'CloudLocker Backup 2 TB',
          variant_name: '2 TB, 1 year',
          quantity: 1,
          unit_price: { amount: 89.99, formatted: '$89.99' },
          total_price: { amount: 89.99, formatted: '$89.99' },
          created_at: '2026-02-21T07:58:36+00:00',
          updated_at: '2026-02-21T08:01:12+00:00',
        },
      ],
      created_at: '2026-02-21T07:58:36+00:00',
      updated_at: '2026-02-21T08:01:12+00:00',
    };
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe(JSON.stringify(expected));
  });
});

describe('GET /api/v1/products', () => {
  it('returns page 2 of the Software category, two per page, exactly', async () => {
    const response = await server.request('/api/v1/products?category=Software&per_page=2&page=2');
    const base = `${server.url}/api/v1/products?category=Software&per_page=2`;
    const expected = {
      data: [
        {
          id: 13,
          name: 'Papertrail Office Home 2026',
          url: 'https://store.example.com/products/papertrail-office-home-2026',
          description:
            'Papertrail Office Home 2026 with the word processor, spreadsheet and presentation apps, for one PC.',
          short_description: 'Papertrail Office Home 2026 key for one PC.',
          notes: null,
          category_name: 'Software',
          brand_name: 'Papertrail',
          brand_id: 'brd_papertrail',
          images: [`${CDN}/papertrail-office-home-2026/1.jpg`],
          region: 'UK',
          channel: 'Non API',
          tags: ['office', 'productivity'],
          isPermanentOutOfStock: false,
          discount_percentage: 0,
          variant: {
            id: 1013,
            name: '1 PC',
            price: {
              amount: '11999',
              currency: 'GBP',
              formatted: '£119.99',
              decimal: '119.99',
              localized_decimal: '119.99',
            },
            face_value: {
              amount: '11999',
              currency: 'GBP',
              formatted: '£119.99',
              decimal: '119.99',
              localized_decimal: '119.99',
            },
          },
          created_at: '2025-09-09T09:09:09+00:00',
          updated_at: '2025-09-10T10:00:00+00:00',
        },
        {
          id: 14,
          name: 'Vectorly Design Suite Pro',
          url: 'https://store.example.com/products/vectorly-design-suite-pro',
          description:
            'Vectorly Design Suite Pro bundles vector illustration, photo editing and page layout, with one year of updates.',
          short_description: 'Vectorly Design Suite Pro, one user for one year.',
          notes: 'Download link is sent by email within 15 minutes.',
          category_name: 'Software',
          brand_name: 'Vectorly',
          brand_id: 'brd_vectorly',
          images: [
            `${CDN}/vectorly-design-suite-pro/1.jpg`,
            `${CDN}/vectorly-design-suite-pro/2.jpg`,
            `${CDN}/vectorly-design-suite-pro/3.jpg`,
          ],
          region: 'US',
          channel: 'API',
          tags: ['design'],
          isPermanentOutOfStock: false,
          discount_percentage: 20,
          variant: {
            id: 1014,
            name: '1 user, 1 year',
            price: {
              amount: '19920',
              currency: 'USD',
              formatted: '$199.20',
              decimal: '199.20',
              localized_decimal: '199.20',
            },
            face_value: {
              amount: '24900',
              currency: 'USD',
              formatted: '$249.00',
              decimal: '249.00',
              localized_decimal: '249.00',
            },
          },
          created_at: '2025-04-22T15:00:00+00:00',
          updated_at: '2026-02-01T08:00:00+00:00',
        },
      ],
      links: {
        first: `${base}&page=1`,
        last: `${base}&page=3`,
        prev: `${base}&page=1`,
        next: `${base}&page=3`,
      },
      meta: { current_page: 2, from: 3, last_page: 3, per_page: 2, to: 4, total: 5 },
    };
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe(JSON.stringify(expected));
  });

  it('formats a four-digit price with grouping in formatted and localized_decimal only', async () => {
    const body = await (await server.request('/api/v1/products/search?term=DevForge')).json();
    expect(body.data.map((product: { id: number }) => product.id)).toEqual([11]);
    expect(body.data[0].variant.price).toEqual({
      amount: '102550',
      currency: 'USD',
      formatted: '$1,025.50',
      decimal: '1025.50',
      localized_decimal: '1,025.50',
    });
  });
});
