import { openLogSession, type LogSession, type LogTransaction } from './log-session';
import type { Lsn } from './lsn';

/**
 * One channel of the log feed (src/db/feed/log.ts): a replication session on a slot, whose
 * transactions are handed on and then confirmed, opened again (after RETRY_MS) whenever it ends
 * until the channel is closed.
 */

export interface ChannelSpec {
  postgresUrl: string;
  publication: string;
  applicationName: string;
  /** Which slot, and whether it is made for this session alone (and dropped with it). */
  slot(): Promise<{ name: string; temporary: boolean }>;
  hand(transaction: LogTransaction): Promise<void>;
  /** Everything before `lsn` has been handed on. */
  handled(lsn: Lsn): void;
  keeps(table: string): boolean;
  /** Called once a session streams: `reopened` when an earlier one of this channel ended. */
  onOpen(session: LogSession, reopened: boolean): Promise<void> | void;
  onEnd(): void;
  /** A failure that ended or prevented a session (not the slot being held by another instance). */
  onError(error: unknown): void;
}

const RETRY_MS = 2_000;

function isSlotBusy(error: unknown): boolean {
  return error instanceof Error && /is active for PID/.test(error.message);
}

async function openOnce(
  spec: ChannelSpec,
): Promise<{ session: LogSession; closed: Promise<Error | undefined> }> {
  let closedWith: (error?: Error) => void = () => undefined;
  const closed = new Promise<Error | undefined>((resolve) => (closedWith = resolve));
  // Transactions can arrive before the session is returned: those are confirmed with a later one.
  const opened: { session?: LogSession } = {};
  const handled = (lsn: Lsn) => {
    opened.session?.confirm(lsn);
    spec.handled(lsn);
  };
  const session = await openLogSession(
    spec.postgresUrl,
    { ...(await spec.slot()), publication: spec.publication, applicationName: spec.applicationName },
    {
      onTransaction: async (transaction) => {
        await spec.hand(transaction);
        // A part of a large transaction: its position comes with the last part.
        if (transaction.endLsn > 0n) handled(transaction.endLsn);
      },
      onProgress: handled,
      onClose: (error) => closedWith(error),
      keeps: spec.keeps,
    },
  );
  opened.session = session;
  return { session, closed };
}

export function keepChannelOpen(spec: ChannelSpec): { close(): Promise<void> } {
  let stopped = false;
  let current: LogSession | undefined;
  let opened = false;
  void (async () => {
    while (!stopped) {
      try {
        const { session, closed } = await openOnce(spec);
        current = session;
        await spec.onOpen(session, opened);
        opened = true;
        const error = await closed;
        if (error && !stopped) spec.onError(error);
      } catch (error) {
        // The lasting slot streaming to another instance is the normal state of a follower.
        if (!stopped && !isSlotBusy(error)) spec.onError(error);
      } finally {
        spec.onEnd();
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
    }
  })();
  return {
    async close() {
      stopped = true;
      await current?.close();
    },
  };
}
