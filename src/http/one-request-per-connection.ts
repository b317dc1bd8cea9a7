import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * HTTP/1.1 pipelining without the parallelism: node:http hands over every request a client
 * pipelines at once, and answers them in order anyway, so 200 searches written in one go would
 * all run together. Here a connection's next request starts when the previous response is done
 * (or its socket is gone, in which case the queued ones are dropped unrun).
 */
export function oneRequestPerConnection(listener: RequestListener): RequestListener {
  const queues = new WeakMap<Socket, [IncomingMessage, ServerResponse][]>();

  const runNext = (socket: Socket) => {
    const queue = queues.get(socket);
    const next = queue?.[0];
    if (!queue || !next) {
      queues.delete(socket);
      return;
    }
    const [req, res] = next;
    if (socket.destroyed) {
      queues.delete(socket);
      return;
    }
    res.once('close', () => {
      queue.shift();
      runNext(socket);
    });
    listener(req, res);
  };

  return (req, res) => {
    const queue = queues.get(req.socket);
    if (queue) {
      queue.push([req, res]);
      return;
    }
    queues.set(req.socket, [[req, res]]);
    runNext(req.socket);
  };
}
