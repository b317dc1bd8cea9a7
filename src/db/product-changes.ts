import { MongoServerError, type ChangeStream, type Db } from 'mongodb';
import type { ProductDoc } from './documents';

export interface ProductChangeHandlers {
  /** A product was inserted, updated, replaced or deleted; `undefined` when a delete hides which. */
  onChange(productId: number | undefined): void;
  /** The deployment has no change streams (a standalone server, FerretDB): watching stops. */
  onUnsupported(reason: string): void;
  /** A stream failed and is reopened after a pause. */
  onError(error: unknown): void;
}

/** "only supported on replica sets" (40573), NotImplemented (238, FerretDB), CommandNotSupported (115). */
const UNSUPPORTED_CODES = new Set([40573, 238, 115]);
const RETRY_MS = 5_000;

/**
 * Follows the products collection's change stream, so shared caches can drop what a change made
 * stale. Reopens after transient failures (from where it stopped, when the server gave a resume
 * token); gives up for good when the deployment cannot stream changes.
 */
export function watchProductChanges(db: Db, handlers: ProductChangeHandlers): { close(): Promise<void> } {
  let stream: ChangeStream<ProductDoc> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let resumeAfter: unknown;
  let closed = false;

  const open = () => {
    stream = db
      .collection<ProductDoc>('products')
      .watch([{ $project: { 'fullDocument.id': 1, operationType: 1 } }], {
        fullDocument: 'updateLookup',
        ...(resumeAfter ? { resumeAfter } : {}),
      });
    stream.on('change', (change) => {
      resumeAfter = change._id;
      const document = 'fullDocument' in change ? change.fullDocument : undefined;
      handlers.onChange(typeof document?.id === 'number' ? document.id : undefined);
    });
    stream.on('error', (error) => {
      void stream?.close().catch(() => undefined);
      if (closed) return;
      if (
        error instanceof MongoServerError &&
        typeof error.code === 'number' &&
        UNSUPPORTED_CODES.has(error.code)
      ) {
        handlers.onUnsupported(error.message);
        return;
      }
      handlers.onError(error);
      retry = setTimeout(open, RETRY_MS);
      retry.unref();
    });
  };
  open();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await stream?.close().catch(() => undefined);
    },
  };
}
