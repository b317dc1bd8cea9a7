import {
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';

export interface NodeGuardOptions {
  /** Largest request body accepted, in bytes, however it is sent (Content-Length or chunked). */
  maxBodyBytes: number;
}

/** A host name or IP literal with an optional port: what may end up in a pagination link. */
const SANE_HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Where a request no URL can be built from is sent on to (src/http/use-client-errors.ts answers). */
const INVALID_REQUEST_PATH = '/.invalid-request';
const invalidReasons = new WeakMap<IncomingMessage, string>();

/** Why the node:http layer found the request malformed (its 400's message), if it did. */
export function invalidRequestReason(serverContext: unknown): string | undefined {
  const req = (serverContext as { req?: IncomingMessage } | undefined)?.req;
  return req && invalidReasons.get(req);
}

/**
 * whatwg-node builds each request's URL as `http://${Host}${target}` and answers a TypeError from
 * `new URL` with a 500 and its stack. A Host or target that makes no URL (a port over 65535, an
 * IPv4 address over 255, `[:::::]`) is marked instead: the request goes on with a harmless URL to
 * the app, which answers our 400 and so logs and counts it like any other. An absolute-form target
 * (`GET http://host/path`, RFC 9112 §3.2.2) is taken as the origin-form it stands for.
 */
const INVALID_HOST = 'The Host header is invalid.';
const MISSING_HOST = 'The Host header is missing.';
const INVALID_TARGET = 'The request target is invalid.';

/** node:http keeps the first of repeated Host headers; the raw headers still list them all. */
function hostCount(req: IncomingMessage): number {
  let count = 0;
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    const name = req.rawHeaders[index]!;
    if (name.length === 4 && (name === 'Host' || name === 'host' || name.toLowerCase() === 'host'))
      count += 1;
  }
  return count;
}

/**
 * Hosts already found to make a URL: a server sees a handful, so the regex and the URL parse run
 * once per host, not per request. Bounded: past it, a new host is only checked, not kept.
 */
const goodHosts = new Set<string>();
const GOOD_HOSTS_KEPT = 256;

function isGoodHost(host: string): boolean {
  if (goodHosts.has(host)) return true;
  if (!SANE_HOST.test(host) || !URL.canParse(`http://${host}/`)) return false;
  if (goodHosts.size < GOOD_HOSTS_KEPT) goodHosts.add(host);
  return true;
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host, or with more than one, is a 400 (the server
 * runs with node:http's own check off, whose 400 has no body).
 */
function hostProblem(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  if (host === undefined) return req.httpVersionMinor >= 1 ? MISSING_HOST : undefined;
  if (!isGoodHost(host) || hostCount(req) > 1) return INVALID_HOST;
  return undefined;
}

/**
 * With a Host that makes a URL, `http://${host}${target}` does too whenever the target starts
 * with `/` (the URL parser fails in no state past the authority), so only other forms are parsed.
 */
function targetProblem(req: IncomingMessage): string | undefined {
  const target = req.url ?? '/';
  if (target.startsWith('/')) return undefined;
  const absolute = /^https?:\/\//i.test(target) ? URL.parse(target) : null;
  if (!absolute) return INVALID_TARGET;
  req.url = `${absolute.pathname}${absolute.search}`;
  return undefined;
}

function checkTarget(req: IncomingMessage): void {
  const reason = hostProblem(req) ?? targetProblem(req);
  if (reason === undefined) return;
  invalidReasons.set(req, reason);
  req.url = INVALID_REQUEST_PATH;
  delete req.headers.host;
}

const CLIENT_ERROR_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request took too long to arrive.'],
};

/** node:http's own checks that answer without a body; the guards above make the same checks. */
export const NODE_SERVER_OPTIONS = { requireHostHeader: false } as const;

const EXPECTATION_FAILED = JSON.stringify({ message: 'The Expect header is not supported.' });

/**
 * What node:http's parser refuses (a space in the target, a bad header line) gets our JSON
 * instead of a bare `400 Bad Request`, and so does an `Expect` other than `100-continue` (a bare
 * 417); each is told to `onClientError`.
 */
export function answerClientErrors(server: Server, onClientError: (code: string) => void): void {
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    onClientError('EXPECTATION_FAILED');
    res.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(EXPECTATION_FAILED),
      'cache-control': 'no-store',
      connection: 'close',
    });
    res.end(EXPECTATION_FAILED);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const code = error.code ?? 'unknown';
    if (code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    onClientError(code);
    const [status, message] = CLIENT_ERROR_STATUS[code] ?? [400, 'The request is malformed.'];
    const body = JSON.stringify({ message });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `cache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
    );
  });
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

/**
 * Guards at the node:http layer, before anything reads the request: the Host header must be a
 * host (it becomes the origin of links when PUBLIC_BASE_URL is unset) and with the target make a
 * URL (see checkTarget), and the body is bounded. A declared Content-Length over `maxBodyBytes`
 * is answered 413 at once; one within it is handed on unread, since node's parser ends the body
 * at its length. A chunked body is counted as it arrives: past `maxBodyBytes` the answer is 413
 * and the connection is closed, nothing beyond the limit kept; within it, it is handed on whole
 * as `req.body`. (Not every body: whatwg-node's adapter walks `Object.keys` of a `req.body`, one
 * string per byte, 14 µs for a 400-byte query.)
 */
export function guardRequests(
  listener: RequestListener,
  { maxBodyBytes }: NodeGuardOptions,
): RequestListener {
  const tooLarge = `The request body must not be larger than ${maxBodyBytes} bytes.`;
  return (req, res) => {
    checkTarget(req);
    if (req.headers['transfer-encoding'] === undefined) {
      if (Number(req.headers['content-length'] ?? 0) > maxBodyBytes) return refuseBody(req, res, tooLarge);
      return listener(req, res);
    }

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
