import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface PipelineOptions {
  /** Requests one connection may have waiting behind the one being answered; past it it is closed. */
  maxWaiting: number;
  /** Told when a connection is closed for pipelining past `maxWaiting`. */
  onOverflow?: () => void;
}

/** node:http's own flag for a socket it stopped reading (its `parserOnIncoming`, `readStart`). */
type HttpSocket = Socket & { _paused?: boolean; parser?: { pause(): void; resume(): void } | null };

/**
 * Stops reading a connection until its answer is written. node:http honours `_paused` (a handler
 * reading a body does not resume the socket, and it pauses the parser after the chunk it is in);
 * TCP then holds the rest of what the client sent.
 */
function stopReading(socket: HttpSocket): void {
  if (socket._paused) return;
  socket._paused = true;
  socket.pause();
}

function readAgain(socket: HttpSocket): void {
  if (!socket._paused || socket.destroyed) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}

/**
 * Closes a connection whose client pipelined too much. node:http then destroys each request it
 * parsed and did not answer with an 'aborted' error and formats that error's stack (`checkError`
 * reads `err.stack`): one 64 KB read of `GET /healthz` is ~1,500 requests, and their stacks were a
 * third of the CPU 10 such sockets cost (1.1 s; row 2 of issue 36). The stacks say nothing (the
 * client left), so none is captured while this socket's close listeners run; the limit is put back
 * after node:http's listener, and in the next microtask should a listener throw.
 */
function closeWithoutStacks(socket: Socket): void {
  let limit = Error.stackTraceLimit;
  const restore = () => {
    Error.stackTraceLimit = limit;
  };
  socket.prependOnceListener('close', () => {
    limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    queueMicrotask(restore);
  });
  socket.once('close', restore);
  socket.destroy();
}

/**
 * HTTP/1.1 pipelining without the parallelism, and without the pile: node:http hands over every
 * request a client pipelines as soon as it is parsed, and answers them in order anyway, so 200
 * searches written in one go would all run together, and 100,000 `GET /healthz` written behind a
 * live stream were all parsed and kept (2.3 GB, never answered). Here a connection's next request
 * starts when the previous response is done (or its socket is gone, and the queued ones are
 * dropped unrun); while one is waiting the socket is not read, so what else the client pipelines
 * stays in TCP's buffers. What one read had already brought is bounded: a connection with more
 * than `maxWaiting` requests waiting is closed (RFC 9112 §9.3.2: a client retries what a closed
 * connection did not answer).
 */
export function oneRequestPerConnection(
  listener: RequestListener,
  { maxWaiting, onOverflow }: PipelineOptions,
): RequestListener {
  const queues = new WeakMap<Socket, [IncomingMessage, ServerResponse][]>();

  const runNext = (socket: HttpSocket) => {
    const queue = queues.get(socket);
    const next = queue?.[0];
    if (!queue || !next || socket.destroyed) {
      queues.delete(socket);
      return;
    }
    const [req, res] = next;
    res.once('close', () => {
      queue.shift();
      // A pipelined request waits for the next turn of the event loop: answered in this one, a read's
      // worth of them (hundreds) would run back to back while every other connection's I/O waits.
      if (queue.length > 0) setImmediate(runNext, socket);
      else queues.delete(socket);
    });
    // The last one waiting is under way: the client's next request may be read (and its body).
    if (queue.length === 1) readAgain(socket);
    listener(req, res);
  };

  return (req, res) => {
    const socket: HttpSocket = req.socket;
    // The rest of a read that brought too many: parsed after the socket was closed for it.
    if (socket.destroyed) return;
    const queue = queues.get(socket);
    if (!queue) {
      queues.set(socket, [[req, res]]);
      runNext(socket);
      return;
    }
    if (queue.length > maxWaiting) {
      queue.length = 0;
      onOverflow?.();
      closeWithoutStacks(socket);
      return;
    }
    queue.push([req, res]);
    stopReading(socket);
  };
}
