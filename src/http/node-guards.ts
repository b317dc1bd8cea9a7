import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

export interface NodeGuardOptions {
  /** Largest request body accepted, in bytes, however it is sent (Content-Length or chunked). */
  maxBodyBytes: number;
}

/** A host name or IP literal with an optional port: what may end up in a pagination link. */
const SANE_HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(JSON.stringify({ message }));
}

/** How long the rest of a refused body is read (and dropped) so the client gets to read the 413. */
const LINGER_MS = 2_000;

/**
 * The 413 is written at once but ended only when the client has finished sending (its rest read
 * and dropped, never kept) or after LINGER_MS: node:http closes a `Connection: close` socket as
 * soon as the response ends, and a client still writing would see EPIPE instead of the answer.
 */
function refuseBody(req: IncomingMessage, res: ServerResponse, message: string): void {
  const body = JSON.stringify({ message });
  res.writeHead(413, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.write(body);
  const finish = () => {
    clearTimeout(timer);
    if (!res.writableEnded) res.end();
  };
  const timer = setTimeout(() => {
    finish();
    req.socket.destroy();
  }, LINGER_MS);
  timer.unref();
  req.once('end', finish);
  req.once('close', finish);
  req.resume();
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * Guards at the node:http layer, before anything reads the request: the Host header must be a
 * host (it becomes the origin of links when PUBLIC_BASE_URL is unset), and the body is counted as
 * it arrives, chunked or not. Past `maxBodyBytes` the answer is 413 and the connection is closed;
 * nothing beyond the limit is kept. A body within the limit is handed on whole (whatwg-node's
 * adapter takes `req.body` as it is), so Yoga never reads the socket itself.
 */
export function guardRequests(
  listener: RequestListener,
  { maxBodyBytes }: NodeGuardOptions,
): RequestListener {
  const tooLarge = `The request body must not be larger than ${maxBodyBytes} bytes.`;
  return (req, res) => {
    const host = req.headers.host;
    if (host !== undefined && !SANE_HOST.test(host)) return refuse(res, 400, 'The Host header is invalid.');
    if (!hasBody(req)) return listener(req, res);
    if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) return refuseBody(req, res, tooLarge);

    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBodyBytes) {
        chunks.push(chunk);
        return;
      }
      stopReading();
      chunks.length = 0;
      refuseBody(req, res, tooLarge);
    };
    const onEnd = () => {
      stopReading();
      Object.assign(req, { body: Buffer.concat(chunks, received) });
      listener(req, res);
    };
    const onError = () => stopReading();
    const stopReading = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.pause();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  };
}
