import { useOpenTelemetry } from '@envelop/opentelemetry';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';
import type { Edge } from '../http/router';

const tracer = () => trace.getTracer('storefront-gateway.graphql');

function endSpan(span: Span, failed: boolean): void {
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * Spans for GraphQL parse and validate, children of the HTTP request's span; envelop's
 * OpenTelemetry plugin does not make them, only execute.
 */
function useParseAndValidateSpans(): Plugin {
  return {
    onParse() {
      const span = tracer().startSpan('graphql.parse', { kind: SpanKind.INTERNAL });
      return ({ result }) => endSpan(span, result instanceof Error);
    },
    onValidate() {
      const span = tracer().startSpan('graphql.validate', { kind: SpanKind.INTERNAL });
      return ({ valid }) => endSpan(span, !valid);
    },
  };
}

/**
 * Names the HTTP server span `GET /api/v1/products/{product}` with `http.route` (the route label
 * of logs and metrics, low in cardinality): the HTTP instrumentation knows only the method.
 */
function httpRouteNameEdge(routeLabel: (pathname: string) => string): Edge {
  return {
    routes: {
      other(request, url) {
        const span = trace.getSpan(context.active());
        if (!span) return;
        const route = routeLabel(url.pathname);
        span.setAttribute('http.route', route);
        span.updateName(`${request.method} ${route}`);
      },
    },
  };
}

/**
 * The spans of a traced server beyond HTTP and MongoDB: the HTTP span's route, GraphQL parse, validate and execute (envelop's plugin, with the
 * global tracer provider the SDK registered; the document is recorded, variables and results are
 * not, as they may hold customer data). Loaded only when tracing is on.
 */
export function graphqlTracingPlugins(routeLabel: (pathname: string) => string): {
  edge: Edge;
  plugins: Plugin[];
} {
  const plugins = [
    useParseAndValidateSpans(),
    useOpenTelemetry(
      { resolvers: false, variables: false, result: false },
      trace.getTracerProvider(),
      SpanKind.INTERNAL,
      {},
      'storefront-gateway.graphql',
      'graphql.execute ',
    ) as Plugin,
  ];
  return { edge: httpRouteNameEdge(routeLabel), plugins };
}

/** The trace id of the span active now (the HTTP request's), for the request's log line. */
export function activeTraceId(): string | undefined {
  const spanContext = trace.getSpan(context.active())?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
