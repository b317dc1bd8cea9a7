import type { Db } from 'mongodb';
import type { CallOptions, ReadLimits } from '../guards/deadline';
import { ULID_FIELD_INDEX } from '../mongo';
import type { IndexEvent } from '../guards/index-keeper';
import type { OrderDoc } from '../documents';
import { fillWindow, readEach, readOrder, type UnreadableReport } from '../document-reading';
import { foreignKeyProbe } from '../foreign-keys';
import { orderRecord } from '../records';
import {
  listedUlid,
  onKeys,
  ORDER_KEYS,
  orderFilter,
  PROJECTION,
  type OrderCriteria,
  type OrderWindow,
  type Raw,
} from './order-filter';
import { createOrderWindows } from './order-windows';

export {
  matchesOrderCriteria,
  orderFilter,
  RECENT_WALK,
  type OrderCriteria,
  type OrderWindow,
} from './order-filter';

export interface OrderRepositoryOptions extends ReadLimits {
  /** Told of each stored order that cannot be served (it is left out). */
  onUnreadable?: UnreadableReport;
  /** Told when an index a list names is found missing, and when creating it again ends. */
  onIndexEvent?: (event: IndexEvent) => void;
}

export function createOrderRepository(
  db: Db,
  { maxTimeMS, onUnreadable, onIndexEvent }: OrderRepositoryOptions = {},
) {
  // Server-side bound of every read: an abandoned query does not run on after the 503.
  const reads = maxTimeMS ? { maxTimeMS } : {};
  const orders = db.collection<OrderDoc>('orders');
  /** The same collection, read as stored: every document goes through readOrder. */
  const stored = db.collection('orders');
  const foreignKeys = foreignKeyProbe(stored, ORDER_KEYS, reads);
  const read = (rows: Raw[]) => readEach('orders', rows, readOrder, onUnreadable);
  const storedWindow = createOrderWindows({ orders, stored, reads, foreignKeys, onIndexEvent });

  return {
    /**
     * `ulid` must already be canonical (upper case). By the primary key (`_id` = ulid); an order
     * another writer keyed its own way, by the `ulid` field's index.
     */
    async findByUlid(ulid: string, { signal }: CallOptions = {}): Promise<OrderDoc | null> {
      const own = await stored.findOne(onKeys(ulid), { projection: PROJECTION, ...reads, signal });
      const found =
        own ??
        (await stored.findOne(
          { ulid },
          { projection: PROJECTION, hint: ULID_FIELD_INDEX, ...reads, signal },
        ));
      return found === null ? null : (read([found])[0] ?? null);
    },

    async findByIds(ids: readonly number[], { signal }: CallOptions = {}): Promise<OrderDoc[]> {
      return read(
        await stored.find({ id: { $in: [...ids] } }, { projection: PROJECTION, ...reads, signal }).toArray(),
      );
    },

    async findByItemIds(itemIds: readonly number[], { signal }: CallOptions = {}): Promise<OrderDoc[]> {
      return read(
        await stored
          .find({ 'items.id': { $in: [...itemIds] } }, { projection: PROJECTION, ...reads, signal })
          .toArray(),
      );
    },

    /**
     * Keyset paging on `_id` (the ULID), items embedded. DocumentDB orders only by the primary key,
     * so a list narrowed by an indexed member (a customer, states) has two plans, each cheap for
     * one kind of list: walk the newest orders and filter (a customer with many orders), or read
     * the member's index and sort what it finds (a customer with few). The walk goes first,
     * bounded to RECENT_WALK orders; when that does not fill the window, the index does. Orders
     * other writers keyed their own way are merged in by their ULID (src/db/foreign-keys.ts).
     */
    async findWindow(
      criteria: OrderCriteria,
      window: OrderWindow,
      { signal }: CallOptions = {},
    ): Promise<OrderDoc[]> {
      return fillWindow(
        window,
        (part) => storedWindow(criteria, part, signal),
        read,
        (part, row, limit) => ({
          ...part,
          ...(part.oldestFirst ? { beforeUlid: listedUlid(row) } : { afterUlid: listedUlid(row) }),
          limit,
        }),
      );
    },

    async countMatching(criteria: OrderCriteria, { signal }: CallOptions = {}): Promise<number> {
      // Exact, never estimatedDocumentCount: DocumentDB estimates from planner statistics.
      return orders.countDocuments(orderFilter(criteria), { ...reads, signal });
    },

    async count({ signal }: CallOptions = {}): Promise<number> {
      return orders.countDocuments({}, { ...reads, signal });
    },

    async insertMany(docs: OrderDoc[]): Promise<void> {
      if (docs.length > 0) await orders.insertMany(docs.map(orderRecord), { ordered: false });
    },
  };
}

export type OrderRepository = ReturnType<typeof createOrderRepository>;
