import type { Db } from 'mongodb';

/** A few customers of the loaded data and their order ULIDs, so a person can try the order endpoint. */
export interface CustomerSample {
  customerId: string;
  orderUlids: string[];
}

/** Reads a bounded slice of the orders (no sort: cheap on any size) and groups it by customer. */
export async function sampleCustomers(db: Db, customers = 3, ordersEach = 2): Promise<CustomerSample[]> {
  const orders = db
    .collection<{ ulid: string; customer_id: string }>('orders')
    .find({}, { projection: { _id: 0, ulid: 1, customer_id: 1 } })
    .limit(500);
  const byCustomer = new Map<string, string[]>();
  for await (const order of orders) {
    const ulids = byCustomer.get(order.customer_id) ?? [];
    if (ulids.length === 0 && byCustomer.size >= customers) continue;
    if (ulids.length < ordersEach) ulids.push(order.ulid);
    byCustomer.set(order.customer_id, ulids);
  }
  return [...byCustomer].map(([customerId, orderUlids]) => ({ customerId, orderUlids }));
}

/** The lines `npm run seed` ends with: who to be, which orders to open, and how. */
export function tryItLines(samples: CustomerSample[], url: string | undefined): string[] {
  const baseUrl = url ?? 'http://127.0.0.1:<the port `npm start` logs>';
  if (samples.length === 0)
    return ['No orders were loaded; try the catalogue: ' + `${baseUrl}/api/v1/products`];
  const width = Math.max(...samples.map((sample) => sample.customerId.length));
  const [first] = samples;
  return [
    'Customers and some of their orders:',
    ...samples.map((sample) => `  ${sample.customerId.padEnd(width)}  ${sample.orderUlids.join('  ')}`),
    `Try one (with \`npm start\` running on the same configuration, it listens on ${baseUrl}):`,
    `  curl -H "Authorization: Bearer $(npm run -s token -- --sub ${first!.customerId})" \\`,
    `    ${baseUrl}/api/v1/orders/${first!.orderUlids[0]}`,
  ];
}

/**
 * Where `npm start` with the same configuration listens (PUBLIC_BASE_URL names the public address,
 * which may be a proxy's). A wildcard host is reached on loopback; PORT=0 is chosen at start.
 */
export function listenUrl(host: string, port: number): string | undefined {
  if (port === 0) return undefined;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** Said after generated data was loaded without the fixtures. */
export const FIXTURES_REPLACED =
  "Generated data replaced the fixtures: the README's examples (cus_alice, cus_bob and their orders) " +
  'now answer 404; `npm run seed -- --fixtures` brings them back.';
