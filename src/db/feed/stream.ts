import {
  MongoServerError,
  type ChangeStream,
  type ChangeStreamDocument,
  type Collection,
  type Document,
} from 'mongodb';
import { FEED_COMMENT, type FeedBatch, type Follower } from '../feed-types';
import type { WatermarkStore } from './watermarks';
import { TEXTS, writtenSince } from './range';

/**
 * Following a collection by its change stream (replica sets, sharded clusters), one change per
 * batch, resumed from the saved token after a restart.
 */

interface StreamOptions<Doc> {
  maxTimeMS?: number;
  projection: Document;
  watermarks: WatermarkStore;
  deliver: (batch: FeedBatch<Doc>) => Promise<void>;
  onError: (error: unknown) => void;
}

const RETRY_MS = 5_000;
/** The resume token is saved at most this often (one write per change would double the writes). */
const SAVE_EVERY_MS = 1_000;
/** How long after its write a change is assumed delivered and handled when the stream is idle. */
const SETTLE_MS = 2_000;
/** ChangeStreamHistoryLost: the saved token is older than the oplog. */
const HISTORY_LOST = 286;

export async function streamChanges<Doc extends Document>(
  collection: Collection<Doc>,
  { projection, watermarks, deliver, onError, maxTimeMS }: StreamOptions<Doc>,
): Promise<Follower> {
  const excluded = Object.keys(projection);
  let resumeAfter = (await watermarks.load())?.resume_token;
  let stream: ChangeStream<Doc> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  let busySince: number | undefined;
  let brokenSince: number | undefined = undefined;
  let savedAt = 0;
  let lastEventAt = Date.now();

  async function handle(change: ChangeStreamDocument<Doc>): Promise<void> {
    busySince = Date.now();
    lastEventAt = busySince;
    const key = 'documentKey' in change ? change.documentKey._id : undefined;
    if (change.operationType === 'delete') await deliver({ changes: [{ _id: key, document: null }] });
    else if ('fullDocument' in change)
      await deliver({
        changes: [{ _id: key, document: (change.fullDocument as Doc | undefined) ?? null }],
      });
    else await deliver({ changes: [], unseenChanges: true });
    resumeAfter = change._id;
    if (Date.now() - savedAt >= SAVE_EVERY_MS) {
      savedAt = Date.now();
      await watermarks.save({ resume_token: resumeAfter });
    }
    busySince = undefined;
  }

  async function follow(): Promise<void> {
    const leftOut = excluded.map((field) => [`fullDocument.${field}`, 0]);
    stream = collection.watch(leftOut.length > 0 ? [{ $project: Object.fromEntries(leftOut) }] : [], {
      fullDocument: 'updateLookup',
      ...(resumeAfter ? { resumeAfter } : {}),
    });
    brokenSince = undefined;
    try {
      for await (const change of stream) await handle(change);
    } catch (error) {
      if (closed) return;
      brokenSince ??= busySince ?? Date.now();
      busySince = undefined;
      if (error instanceof MongoServerError && Number(error.code) === HISTORY_LOST) {
        // Changes were missed: everything derived is dropped and the stream starts from now.
        resumeAfter = undefined;
        await deliver({ changes: [], unseenChanges: true }).catch(onError);
      }
      onError(error);
      await stream.close().catch(() => undefined);
      retry = setTimeout(() => void follow(), RETRY_MS);
      retry.unref();
    }
  }
  void follow();

  const handledBefore = () => {
    const ms = (busySince ?? brokenSince ?? Date.now()) - SETTLE_MS;
    return { date: new Date(ms), text: TEXTS.at(ms) as string };
  };
  return {
    mode: 'stream',
    hasUnhandled: async () =>
      (await collection.findOne(writtenSince(handledBefore()) as never, {
        projection: { _id: 1 },
        comment: FEED_COMMENT,
        maxTimeMS,
      })) !== null,
    handledBefore,
    lagSeconds: () =>
      brokenSince !== undefined
        ? (Date.now() - brokenSince) / 1000
        : busySince
          ? (Date.now() - lastEventAt) / 1000
          : 0,
    async close() {
      closed = true;
      clearTimeout(retry);
      await stream?.close().catch(() => undefined);
    },
  };
}
