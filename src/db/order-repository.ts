import type { Db } from 'mongodb';
import type { OrderDoc } from './documents';

const PROJECTION = { _id: 0 } as const;

export function createOrderRepository(db: Db) {
  const orders = db.collection<OrderDoc>('orders');

  return {
    /** `ulid` must already be canonical (upper case). */
    async findByUlid(ulid: string): Promise<OrderDoc | null> {
      return orders.findOne({ ulid }, { projection: PROJECTION });
    },

    async findByIds(ids: readonly number[]): Promise<OrderDoc[]> {
      return orders.find({ id: { $in: [...ids] } }, { projection: PROJECTION }).toArray();
    },

    async findByItemIds(itemIds: readonly number[]): Promise<OrderDoc[]> {
      return orders.find({ 'items.id': { $in: [...itemIds] } }, { projection: PROJECTION }).toArray();
    },

    async count(): Promise<number> {
      return orders.estimatedDocumentCount();
    },

    async insertMany(docs: OrderDoc[]): Promise<void> {
      if (docs.length > 0) await orders.insertMany(docs, { ordered: false });
    },
  };
}

export type OrderRepository = ReturnType<typeof createOrderRepository>;
