import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';

/** Probes and scrapes would be most of the traces and say nothing. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export interface Tracing {
  /** Sends the spans still queued; call before the process exits. */
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry Node SDK with HTTP server and MongoDB driver spans. It must start before
 * `mongodb` is first imported (the instrumentation patches the driver as it loads), so src/main.ts
 * imports this module, then the server. The exporter, its protocol (OTEL_EXPORTER_OTLP_PROTOCOL,
 * http/protobuf by default, or http/json), the batch delay, the sampler, propagators and the
 * service name (OTEL_SERVICE_NAME) come from the standard OTEL_* variables, read by the SDK.
 */
export function startTracing(): Tracing {
  const sdk = new NodeSDK({
    // A default the environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) overrides.
    resource: resources
      .defaultResource()
      .merge(resources.resourceFromAttributes({ 'service.name': 'storefront-gateway' })),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) =>
          UNTRACED_PATHS.has(new URL(request.url ?? '/', 'http://localhost').pathname),
        // The server makes no outgoing HTTP calls worth a span (JWKS is fetched through undici).
        disableOutgoingRequestInstrumentation: true,
      }),
      new MongoDBInstrumentation(),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
