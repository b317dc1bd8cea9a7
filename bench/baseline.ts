import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { jwtVerify } from 'jose';
import { MongoClient } from 'mongodb';
import { criteriaFor, pageNumbers } from '../src/catalog/product-query';
import type { MoneyDoc, OrderDoc, ProductDoc } from '../src/db/documents';
import { createOrderRepository } from '../src/db/orders/order-repository';
import type { ProductCriteria } from '../src/db/catalog/product-plans';
import { createProductRepository } from '../src/db/catalog/product-repository';
import {
  formatCurrency,
  formatLocalizedDecimal,
  minorToDecimalString,
  minorToMajorNumber,
} from '../src/format/money';
import { formatTimestamp } from '../src/format/timestamp';
import { pageEnvelope } from '../src/rest/pagination';
import { canonicalQuery, readQuery } from '../src/rest/query';
import { announce, exitWithParent, peerEnvironment } from './peers/shared';

/**
 * The limit: a bare node:http handler that sends the same MongoDB queries as our /api/v1 (through
 * the same repositories) and writes the same JSON bytes, with no framework and no GraphQL. The
 * client is a plain MongoClient with the driver's defaults (no command monitoring), as an
 * application without a gateway would have it. GraphQL scenarios are measured against these same
 * REST routes (same data, REST-shaped), see docs/benchmarks.md.
 */

const env = peerEnvironment();
const client = new MongoClient(env.mongoUri, { maxPoolSize: env.maxPoolSize });
await client.connect();
const db = client.db(env.dbName);
const products = createProductRepository(db);
const orders = createOrderRepository(db);
const jwtKey = new TextEncoder().encode(env.jwtSecret);
const locale = env.storeLocale;

const JSON_TYPE = 'application/json; charset=utf-8';
const CROCKFORD_ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function productMoney(money: MoneyDoc) {
  return {
    amount: String(money.amount),
    currency: money.currency,
    formatted: formatCurrency(money.amount, money.currency, locale),
    decimal: minorToDecimalString(money.amount),
    localized_decimal: formatLocalizedDecimal(money.amount, locale),
  };
}

/** The /api/v1 product, field for field in the contract's order. */
function restProduct(p: ProductDoc) {
  return {
    id: p.id,
    name: p.name,
    url: p.url,
    description: p.description,
    short_description: p.short_description,
    notes: p.notes,
    category_name: p.category_name,
    brand_name: p.brand_name,
    brand_id: p.brand_id,
    images: p.images,
    region: p.region,
    channel: p.channel,
    tags: p.tags,
    isPermanentOutOfStock: p.is_permanent_out_of_stock,
    discount_percentage: p.discount_percentage,
    variant: {
      id: p.variant.id,
      name: p.variant.name,
      price: productMoney(p.variant.price),
      face_value: productMoney(p.variant.face_value),
    },
    created_at: formatTimestamp(p.created_at),
    updated_at: formatTimestamp(p.updated_at),
  };
}

function orderMoney(amount: number, currency: string) {
  return { amount: minorToMajorNumber(amount), formatted: formatCurrency(amount, currency, locale) };
}

function restOrder(o: OrderDoc) {
  return {
    id: o.id,
    ulid: o.ulid,
    order_number: o.order_number,
    fulfillment_status: o.fulfillment_status,
    payment_status: o.payment_status,
    subtotal: orderMoney(o.subtotal, o.currency),
    conversion_fees: orderMoney(o.conversion_fees, o.currency),
    total: orderMoney(o.total, o.currency),
    currency: o.currency,
    items: o.items.map((item) => ({
      id: item.id,
      product_name: item.product_name,
      variant_name: item.variant_name,
      quantity: item.quantity,
      unit_price: orderMoney(item.unit_price, o.currency),
      total_price: orderMoney(item.total_price, o.currency),
      created_at: formatTimestamp(item.created_at),
      updated_at: formatTimestamp(item.updated_at),
    })),
    created_at: formatTimestamp(o.created_at),
    updated_at: formatTimestamp(o.updated_at),
  };
}

/** Same paging as ours: skip/limit on the id order; a partial non-empty page proves the total. */
async function productPage(res: ServerResponse, url: URL, criteria: ProductCriteria, page = 1, perPage = 15) {
  const skip = (page - 1) * perPage;
  const { items, stored } = await products.findPage(criteria, skip, perPage);
  const total = stored > 0 && stored < perPage ? skip + stored : await products.count(criteria);
  const numbers = pageNumbers(page, perPage, total, items.length);
  send(
    res,
    200,
    pageEnvelope(
      { items: items.map(restProduct), ...numbers },
      { query: canonicalQuery(readQuery(url.searchParams)), baseUrl: env.publicBaseUrl, path: url.pathname },
    ),
  );
}

async function bearer(req: IncomingMessage): Promise<{ customer?: string; scopes: string[] }> {
  const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
  if (!match?.[1]) return { scopes: [] };
  try {
    const { payload } = await jwtVerify(match[1], jwtKey, { algorithms: ['HS256'], clockTolerance: 5 });
    return {
      customer: typeof payload.sub === 'string' ? payload.sub : undefined,
      scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
    };
  } catch {
    return { scopes: [] };
  }
}

const unauthenticated = (res: ServerResponse) =>
  send(res, 401, { message: 'Unauthenticated.' }, { 'www-authenticate': 'Bearer' });

async function order(req: IncomingMessage, res: ServerResponse, segment: string) {
  const { customer, scopes } = await bearer(req);
  if (!customer) return unauthenticated(res);
  const ulid = decodeURIComponent(segment).toUpperCase();
  const doc = CROCKFORD_ULID.test(ulid) ? await orders.findByUlid(ulid) : null;
  if (!doc) return send(res, 404, { message: 'Order not found.' });
  if (doc.customer_id !== customer && !scopes.includes('orders:read:all')) {
    return send(res, 403, { message: 'This action is unauthorized.' });
  }
  send(res, 200, restOrder(doc));
}

/** The owner's newest orders, the same query and formatting as one page of `viewer.orders`. */
async function viewerOrders(req: IncomingMessage, res: ServerResponse, first: number) {
  const { customer } = await bearer(req);
  if (!customer) return unauthenticated(res);
  const rows = await orders.findWindow({ customerId: customer }, { limit: first + 1, oldestFirst: false });
  const page = rows.slice(0, first);
  send(res, 200, {
    data: page.map(restOrder),
    has_more: rows.length > first,
    last: page.at(-1)?.ulid ?? null,
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', env.publicBaseUrl);
  const path = url.pathname;
  if (path === '/api/v1/products' || path === '/api/v1/products/search') {
    // Only what the bench sends is handled: valid numbers and texts (validation is not measured).
    const param = (name: string) => url.searchParams.get(name)?.trim() || undefined;
    const page = Number(param('page') ?? 1);
    const perPage = Number(param('per_page') ?? 15);
    const text = path === '/api/v1/products' ? param('search') : param('term');
    if (!(page >= 1 && perPage >= 1 && perPage <= 100) || (path.endsWith('/search') && !text)) {
      return send(res, 422, { message: 'The given data was invalid.' });
    }
    return productPage(res, url, criteriaFor(text, param('category')), page, perPage);
  }
  if (path === '/bench/viewer-orders') return viewerOrders(req, res, Number(url.searchParams.get('first')));
  if (path === '/bench/categories')
    return send(res, 200, {
      data: (await products.countByCategory()).map(({ name, productCount }) => ({ name, productCount })),
    });
  const orderMatch = /^\/api\/v1\/orders\/([^/]+)$/.exec(path);
  if (orderMatch?.[1]) return order(req, res, orderMatch[1]);
  send(res, 404, { message: 'Not Found.' });
}

const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
  handle(req, res).catch((error: unknown) => {
    console.error(error);
    if (!res.headersSent) send(res, 500, { message: 'Server Error.' });
  });
});
server.listen(env.port, env.host, () => announce('baseline', `http://${env.host}:${env.port}`));
exitWithParent(async () => {
  server.close();
  await client.close();
});
