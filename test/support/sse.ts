/**
 * A GraphQL subscription over Server-Sent Events, read as a client reads it: POST with
 * `Accept: text/event-stream`, then `event: next` / `event: complete` frames (comment lines are
 * Yoga's pings). Events are collected as they arrive; tests wait for them with a deadline.
 */

export interface SubscriptionResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export interface LiveSubscription {
  status: number;
  contentType: string | null;
  /** Every `next` event's payload so far. */
  results: SubscriptionResult[];
  /** Whether `event: complete` arrived. */
  completed(): boolean;
  /** Resolves when the response body ends (complete, or cut). */
  ended: Promise<void>;
  /** Waits until `check` holds over the results, up to `timeoutMs`; throws with what arrived. */
  waitFor(check: (results: SubscriptionResult[]) => boolean, timeoutMs?: number): Promise<void>;
  /** The client goes away. */
  close(): void;
}

export async function subscribe(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<LiveSubscription> {
  const controller = new AbortController();
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: controller.signal,
  });
  const results: SubscriptionResult[] = [];
  let completed = false;
  const read = async () => {
    const reader = response.body?.getReader();
    if (!reader) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        buffer += decoder.decode(chunk.value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = frame.split('\n').filter((line) => !line.startsWith(':'));
          const event = lines
            .find((line) => line.startsWith('event:'))
            ?.slice(6)
            .trim();
          const data = lines
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (event === 'next') results.push(JSON.parse(data) as SubscriptionResult);
          if (event === 'complete') completed = true;
        }
      }
    } catch {
      // Aborted by close(), or cut by the server: `ended` resolves either way.
    }
  };
  const ended = read();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    results,
    completed: () => completed,
    ended,
    async waitFor(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(results)) {
        if (Date.now() > deadline)
          throw new Error(`no such event within ${timeoutMs} ms; got ${JSON.stringify(results)}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => controller.abort(),
  };
}
