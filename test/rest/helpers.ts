import { expect } from 'vitest';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS, FIXTURE_PRODUCTS } from '../../seed/fixtures';
import type { TestServer } from '../support/server';

/** Shared by the /api/v1 tests: one parsed reply, query building, and expectations from the fixtures. */

export const JSON_TYPE = 'application/json; charset=utf-8';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** One request over real HTTP; the body is parsed when there is one. */
export async function call(server: TestServer, path: string, init?: RequestInit): Promise<Reply> {
  const response = await server.request(path, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : null };
}

/** `path?a=1&b=2` with proper form encoding (so `C++` is sent as `C%2B%2B`). */
export function withQuery(path: string, query: Record<string, string> | [string, string][] = {}): string {
  const search = new URLSearchParams(query).toString();
  return search ? `${path}?${search}` : path;
}

export const ids = (reply: Reply): number[] => (reply.body.data as { id: number }[]).map((p) => p.id);

export const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index);

/** Status, exact JSON body (byte for byte) and the JSON content type, in one expectation. */
export function expectJson(reply: Reply, status: number, body: unknown): void {
  expect({ status: reply.status, contentType: reply.headers.get('content-type'), text: reply.text }).toEqual({
    status,
    contentType: JSON_TYPE,
    text: JSON.stringify(body),
  });
}

export function expectUnauthenticated(reply: Reply): void {
  expectJson(reply, 401, { message: 'Unauthenticated.' });
  expect(reply.headers.get('www-authenticate')).toBe('Bearer');
}

export function expectValidationError(reply: Reply, message: string, errors: Record<string, string[]>): void {
  expectJson(reply, 422, { message, errors });
}

/** Order ULIDs of the fixtures, by owner. */
export const ORDERS = Object.fromEntries(FIXTURE_ORDERS.map((order) => [order.id, order.ulid])) as Record<
  number,
  string
>;
export const ALICE = FIXTURE_CUSTOMERS.alice;
export const BOB = FIXTURE_CUSTOMERS.bob;
/** A well-formed ULID that no fixture order has. */
export const UNKNOWN_ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

/**
 * An independent reading of the contract's matching rule over the fixtures, used to cross-check
 * the hand-derived expectations: words AND-ed, fields OR-ed, case-insensitive substring, literal.
 */
export function fixtureMatches(search?: string, category?: string): number[] {
  const words = (search ?? '').trim().split(/\s+/u).filter(Boolean);
  const wanted = category?.trim().toLowerCase();
  return FIXTURE_PRODUCTS.filter((product) => {
    if (wanted && product.category_name.toLowerCase() !== wanted) return false;
    const fields = [
      product.name,
      product.short_description,
      product.brand_name,
      product.category_name,
      ...product.tags,
    ].map((field) => field.toLowerCase());
    return words.every((word) => fields.some((field) => field.includes(word.toLowerCase())));
  }).map((product) => product.id);
}
