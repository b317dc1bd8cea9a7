import type { GraphQLError } from 'graphql';
import { subscriberTooSlow } from '../../errors';

export interface LiveOrderStreamBounds {
  /** How long the oldest order not yet read may wait before the reader counts as too slow. */
  maxLagMs: number;
  /** Distinct orders waiting at most (memory): several of the change feed's batches. */
  maxQueued: number;
}
import type { OrderDoc } from '../documents';

/** What a live subscription yields: an order's new state, or (last) why the stream ends. */
export type LiveOrderEvent = { order: OrderDoc } | { ended: GraphQLError };

export interface LiveOrderStream extends AsyncIterableIterator<LiveOrderEvent> {
  /** Queues an order's state; `print` is its fingerprint (see fingerprintOf in live-orders.ts). */
  offer(order: OrderDoc, print: string): void;
  /** Ends the stream: what is queued is dropped, `error` is the last event. */
  end(error: GraphQLError): void;
}

/** Fingerprints remembered per stream; a forgotten one at worst repeats an unchanged order once. */
const SENT_MEMORY = 1_000;

/** `updated_at` in ms, when it is a date. */
function stampOf(order: OrderDoc | undefined): number | undefined {
  return order?.updated_at instanceof Date ? order.updated_at.getTime() : undefined;
}

/** Written before `than` (when both are known). */
function isBefore(stamp: number | undefined, than: number | undefined): boolean {
  return stamp !== undefined && than !== undefined && stamp < than;
}

/**
 * One subscriber's events, pulled by its reader (Yoga's SSE writer asks for the next one only
 * when the socket takes more). Queued states are coalesced by order: a later state replaces an
 * earlier one not yet read (keeping its place and its wait), so a slow reader holds at most
 * `maxQueued` orders, never a history. A reader is too slow when it leaves an order unread for
 * `maxLagMs`, not by how many one batch brings: a burst of 150 orders in one write ended a reader
 * that kept up, at a bound of 100. The stream then ends with SUBSCRIBER_TOO_SLOW. An order whose
 * fingerprint is the one last sent to this reader is not sent again. `onFinish` runs once,
 * however the stream ends (read to its end, or `return()` when the client goes away).
 */
export function createLiveOrderStream(
  { maxLagMs, maxQueued }: LiveOrderStreamBounds,
  onFinish: () => void,
): LiveOrderStream {
  const queue = new Map<string, { order: OrderDoc; print: string; since: number }>();
  /** Per order, what was sent last: its fingerprint and `updated_at`. */
  const sent = new Map<string, { print: string; stamp: number | undefined }>();
  let ending: GraphQLError | undefined;
  let finished = false;
  let waiting: ((result: IteratorResult<LiveOrderEvent>) => void) | undefined;

  const finish = () => {
    if (finished) return;
    finished = true;
    queue.clear();
    onFinish();
  };

  const remember = (order: OrderDoc, print: string) => {
    const { ulid } = order;
    sent.delete(ulid);
    sent.set(ulid, { print, stamp: stampOf(order) });
    if (sent.size > SENT_MEMORY) sent.delete(sent.keys().next().value as string);
  };

  /** The next result, if there is one now. */
  const take = (): IteratorResult<LiveOrderEvent> | undefined => {
    if (finished) return { done: true, value: undefined };
    for (const [ulid, { order, print }] of queue) {
      queue.delete(ulid);
      if (sent.get(ulid)?.print === print) continue;
      remember(order, print);
      return { done: false, value: { order } };
    }
    if (ending) {
      const ended = ending;
      finish();
      return { done: false, value: { ended } };
    }
    return undefined;
  };

  const wake = () => {
    if (!waiting) return;
    const result = take();
    if (!result) return;
    const resolve = waiting;
    waiting = undefined;
    resolve(result);
  };

  const stream: LiveOrderStream = {
    offer(order, print) {
      if (finished || ending) return;
      const last = sent.get(order.ulid);
      const queued = queue.get(order.ulid);
      // The initial read and the feed can cross: an older state than one sent or queued is stale.
      if (isBefore(stampOf(order), stampOf(queued?.order) ?? last?.stamp)) return;
      if (!queued && last?.print === print) return;
      const now = Date.now();
      queue.set(order.ulid, { order, print, since: queued?.since ?? now });
      const oldest = queue.values().next().value!.since;
      if (now - oldest > maxLagMs || queue.size > maxQueued) stream.end(subscriberTooSlow(maxLagMs));
      else wake();
    },
    end(error) {
      if (finished || ending) return;
      ending = error;
      queue.clear();
      wake();
    },
    next() {
      const result = take();
      if (result) return Promise.resolve(result);
      return new Promise((resolve) => (waiting = resolve));
    },
    return() {
      finish();
      const done: IteratorResult<LiveOrderEvent> = { done: true, value: undefined };
      waiting?.(done);
      waiting = undefined;
      return Promise.resolve(done);
    },
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
