import { describe, expect, it } from 'vitest';
import type { OrderDoc } from '../../src/db/documents';
import { createLiveOrders, type OrderChangeSource } from '../../src/db/orders/live-orders';
import type { LiveOrderEvent } from '../../src/db/orders/live-order-stream';
import { matchesOrderCriteria } from '../../src/db/orders/order-repository';
import { shuttingDown } from '../../src/errors';
import { FIXTURE_CUSTOMERS, FIXTURE_ORDERS } from '../../seed/fixtures';

/**
 * The hub's rules, fast, fed batches the way the change feed hands them over (its HTTP behaviour
 * over the real feed: test/graphql/subscriptions.test.ts).
 */

type Listener = Parameters<OrderChangeSource['subscribe']>[0];

function hub(
  limits: Parameters<typeof createLiveOrders>[1] = { perCustomer: 10, perInstance: 100, queuedOrders: 3 },
  onFailure?: (error: unknown) => void,
) {
  let listener: Listener | undefined;
  const live = createLiveOrders(
    { subscribe: (added) => ((listener = added), () => undefined) },
    limits,
    onFailure,
  );
  const write = (...documents: OrderDoc[]) =>
    listener?.({ changes: documents.map((document) => ({ _id: document.ulid, document })) });
  return { live, write };
}

const [order, other] = FIXTURE_ORDERS.filter((o) => o.customer_id === FIXTURE_CUSTOMERS.alice);
const bobs = FIXTURE_ORDERS.find((o) => o.customer_id === FIXTURE_CUSTOMERS.bob)!;
let clock = Date.parse('2026-11-25T12:00:00Z');
const changed = (base: OrderDoc, fields: Partial<OrderDoc>): OrderDoc => ({
  ...base,
  ...fields,
  updated_at: new Date((clock += 1_000)),
});

/** What is ready to read now (a read that would wait ends the list and stays for the next call). */
const pendingReads = new WeakMap<object, Promise<IteratorResult<LiveOrderEvent>>>();
async function ready(stream: AsyncIterator<LiveOrderEvent>): Promise<(string | undefined)[]> {
  const seen: (string | undefined)[] = [];
  for (;;) {
    const read = pendingReads.get(stream) ?? stream.next();
    pendingReads.set(stream, read);
    const next = await Promise.race([read, new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 5))]);
    if (next === 'waiting') return seen;
    pendingReads.delete(stream);
    if (next.done) return [...seen, 'done'];
    seen.push(
      'ended' in next.value ? String(next.value.ended.extensions.code) : next.value.order.fulfillment_status,
    );
  }
}

const ofCustomer = (customerId: string) => ({
  customerId,
  route: { customerId },
  matches: (o: OrderDoc) => matchesOrderCriteria({ customerId }, o),
});

describe('live orders hub', () => {
  it('coalesces an order a reader has not read yet into its latest state', async () => {
    const { live, write } = hub();
    const stream = live.open(ofCustomer(FIXTURE_CUSTOMERS.alice));
    write(changed(order!, { fulfillment_status: 'processing' }));
    write(changed(order!, { fulfillment_status: 'partially_fulfilled' }));
    write(changed(order!, { fulfillment_status: 'completed' }));
    expect(await ready(stream)).toEqual(['completed']);
  });

  it('sends nothing when status, amounts and items are what it sent last, and never an older state', async () => {
    const { live, write } = hub();
    const stream = live.open(ofCustomer(FIXTURE_CUSTOMERS.alice));
    const processing = changed(order!, { fulfillment_status: 'processing' });
    write(processing);
    expect(await ready(stream)).toEqual(['processing']);
    write(changed(processing, {}));
    write(changed(processing, { order_number: 'renamed' }));
    expect(await ready(stream)).toEqual([]);
    const refunded = changed(order!, { fulfillment_status: 'refunded' });
    const pending = changed(order!, { fulfillment_status: 'pending' });
    write(pending);
    write({ ...refunded, updated_at: new Date(pending.updated_at.getTime() - 500) });
    expect(await ready(stream)).toEqual(['pending']);
  });

  it("routes a change only to its order's, its customer's and the matching lists' subscribers", async () => {
    const { live, write } = hub();
    const one = live.open({ customerId: 'c', route: { ulid: order!.ulid }, matches: () => true });
    const alice = live.open(ofCustomer(FIXTURE_CUSTOMERS.alice));
    const bob = live.open(ofCustomer(FIXTURE_CUSTOMERS.bob));
    const refundedList = live.open({
      customerId: 'desk',
      route: 'all',
      matches: (o) => matchesOrderCriteria({ fulfillmentStatuses: ['refunded'] }, o),
    });
    write(
      changed(other!, { fulfillment_status: 'processing' }),
      changed(bobs, { fulfillment_status: 'refunded' }),
    );
    expect(await ready(one)).toEqual([]);
    expect(await ready(alice)).toEqual(['processing']);
    expect(await ready(bob)).toEqual(['refunded']);
    expect(await ready(refundedList)).toEqual(['refunded']);
    write(changed(order!, { fulfillment_status: 'processing' }));
    expect(await ready(one)).toEqual(['processing']);
  });

  it('ends a reader that falls behind by more than queuedOrders orders, and lets it go', async () => {
    const { live, write } = hub({ perCustomer: 10, perInstance: 100, queuedOrders: 2 });
    const desk = live.open({ customerId: 'desk', route: 'all', matches: () => true });
    write(changed(order!, {}), changed(other!, {}), changed(bobs, {}));
    expect(await ready(desk)).toEqual(['SUBSCRIBER_TOO_SLOW', 'done']);
    expect(live.count()).toBe(0);
  });

  it('gives a reader that keeps up every order of a burst larger than any count bound had', async () => {
    const { live, write } = hub({ perCustomer: 10, perInstance: 100 });
    const desk = live.open({ customerId: 'desk', route: 'all', matches: () => true });
    const burst = Array.from({ length: 150 }, (_, n) =>
      changed({ ...order!, ulid: `01KE78KGFS${String(n).padStart(16, '0')}` }, {}),
    );
    write(...burst);
    expect(await ready(desk)).toHaveLength(150);
  });

  it('ends a reader that leaves an order unread for longer than maxLagMs', async () => {
    const { live, write } = hub({ perCustomer: 10, perInstance: 100, maxLagMs: 40 });
    const desk = live.open({ customerId: 'desk', route: 'all', matches: () => true });
    write(changed(order!, {}));
    await new Promise((resolve) => setTimeout(resolve, 60));
    write(changed(other!, {}));
    expect(await ready(desk)).toEqual(['SUBSCRIBER_TOO_SLOW', 'done']);
    expect(live.count()).toBe(0);
  });

  it('ends a stream at maxLifetimeMs when its token has no expiry, with a retry hint', async () => {
    const { live } = hub({ perCustomer: 10, perInstance: 100, maxLifetimeMs: 30 });
    const stream = live.open(ofCustomer('a'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const last = await stream.next();
    expect(last.done || 'ended' in last.value ? last.value : undefined).toMatchObject({
      ended: { extensions: { code: 'STREAM_LIFETIME_REACHED', retryAfter: 1 } },
    });
    expect(live.count()).toBe(0);
  });

  it('refuses past the bound per address, and runs onEnd once a stream ends', async () => {
    const { live } = hub({ perCustomer: 10, perInstance: 100, perAddress: 1 });
    let ended = 0;
    const first = live.open({ ...ofCustomer('a'), address: 'ip:203.0.113.1', onEnd: () => (ended += 1) });
    expect(() => live.open({ ...ofCustomer('b'), address: 'ip:203.0.113.1' })).toThrow(/per client address/);
    live.open({ ...ofCustomer('b'), address: 'ip:203.0.113.2' });
    await first.return?.();
    expect(ended).toBe(1);
    live.open({ ...ofCustomer('c'), address: 'ip:203.0.113.1' });
    expect(live.count()).toBe(2);
  });

  it('frees a subscription when its reader leaves, even while a read waits', async () => {
    const { live } = hub();
    const stream = live.open(ofCustomer(FIXTURE_CUSTOMERS.alice));
    const waiting = stream.next();
    expect(live.count()).toBe(1);
    await stream.return?.();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(live.count()).toBe(0);
  });

  it('refuses past the bounds per customer and per instance', () => {
    const { live } = hub({ perCustomer: 2, perInstance: 3, queuedOrders: 3 });
    live.open(ofCustomer('a'));
    live.open(ofCustomer('a'));
    expect(() => live.open(ofCustomer('a'))).toThrow(/At most 2 live subscriptions per customer/);
    live.open(ofCustomer('b'));
    expect(() => live.open(ofCustomer('c'))).toThrow(/its limit of 3 live subscriptions/);
    expect(live.count()).toBe(3);
  });

  it('skips a document it cannot offer, and offers the rest of the batch', async () => {
    const failures: unknown[] = [];
    const { live, write } = hub(undefined, (error) => failures.push(error));
    const desk = live.open({ customerId: 'desk', route: 'all', matches: (o) => o.items.length >= 0 });
    write(
      // A state no reading rule accepts (src/db/document-reading.ts): the document is unreadable.
      { ...changed(order!, {}), fulfillment_status: 'teleported' } as unknown as OrderDoc,
      changed(other!, { fulfillment_status: 'refunded' }),
    );
    expect(await ready(desk)).toEqual(['refunded']);
    expect(failures).toHaveLength(1);
  });

  it('ends every stream with the given error on endAll', async () => {
    const { live } = hub();
    const streams = [live.open(ofCustomer('a')), live.open(ofCustomer('b'))];
    expect(live.endAll(shuttingDown(5))).toBe(2);
    for (const stream of streams) expect(await ready(stream)).toEqual(['SERVICE_UNAVAILABLE', 'done']);
    expect(live.count()).toBe(0);
  });
});
