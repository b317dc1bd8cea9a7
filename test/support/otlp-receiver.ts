import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as OTLP/JSON carries it (ids in hex), with its scope's name. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
}

interface OtlpJsonAttribute {
  key: string;
  value: Record<string, unknown>;
}

interface OtlpJsonRequest {
  resourceSpans?: {
    scopeSpans?: {
      scope?: { name?: string };
      spans?: (Omit<ReceivedSpan, 'attributes' | 'scope'> & { attributes?: OtlpJsonAttribute[] })[];
    }[];
  }[];
}

export const SPAN_KIND_SERVER = 2;

/** An export as it arrived, whatever its encoding. */
export interface ReceivedExport {
  path: string;
  contentType: string;
  body: Buffer;
}

/**
 * A minimal OTLP/HTTP receiver on 127.0.0.1: it decodes http/json exports into `spans` and keeps
 * every export's raw body (http/protobuf is checked by the bytes it carries).
 */
export async function startOtlpReceiver(): Promise<{
  url: string;
  spans: ReceivedSpan[];
  exports: ReceivedExport[];
  close(): Promise<void>;
}> {
  const spans: ReceivedSpan[] = [];
  const exports: ReceivedExport[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      exports.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body: Buffer.concat(chunks),
      });
      if (request.url === '/v1/traces' && /json/.test(request.headers['content-type'] ?? '')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJsonRequest;
        for (const resource of body.resourceSpans ?? []) {
          for (const scopeSpans of resource.scopeSpans ?? []) {
            for (const span of scopeSpans.spans ?? []) {
              spans.push({
                ...span,
                scope: scopeSpans.scope?.name ?? '',
                attributes: Object.fromEntries(
                  (span.attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]),
                ),
              });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
