import {
  Kind,
  getOperationAST,
  type DocumentNode,
  type ExecutionResult,
  type OperationDefinitionNode,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { Counter, type Registry } from 'prom-client';
import { createSummedHistogram } from './summed-histogram';

/** The buckets @envelop/prometheus's histogram had (prom-client's default): dashboards keep them. */
const PROM_CLIENT_DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface OperationLabels {
  operationName: string;
  operationType: string;
}

export interface OperationMetricsOptions {
  registry: Registry;
  /** The labels of an operation, from the fixed set (src/observability/metrics.ts). */
  labelsOf: (operation: { operationName?: string; operationType?: string }) => OperationLabels;
}

type Phase = 'parse' | 'validate' | 'context' | 'execute' | 'subscribe';

/**
 * Per GraphQL operation: execution time, executions, and errors by phase, under the names and
 * labels @envelop/prometheus gave them (dashboards keep working). Written for the request path:
 * the labels of a document are worked out once and kept with it, where the library built and
 * filtered label objects in every phase of every request (~30 µs of a small request with its
 * histogram and counters, issue 29). Like the library, it counts the operations it saw parsed,
 * so the /api/v1 executions (pre-parsed documents) are not in these series; their requests are in
 * http_request_duration_seconds.
 */
export function useOperationMetrics({ registry, labelsOf }: OperationMetricsOptions): Plugin {
  const executeSeconds = createSummedHistogram({
    name: 'graphql_envelop_phase_execute',
    help: 'Time spent on running the GraphQL "execute" function',
    buckets: PROM_CLIENT_DEFAULT_BUCKETS,
    registry,
  });
  const executions = new Counter({
    name: 'graphql_envelop_request',
    help: 'Counts the amount of GraphQL requests executed through Envelop',
    labelNames: ['operationName', 'operationType'] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'graphql_envelop_error_result',
    help: 'Counts the amount of errors reported from all phases',
    labelNames: ['operationName', 'operationType', 'phase'] as const,
    registers: [registry],
  });

  // Kept per operation node, not per name a request gives: names no operation has add nothing.
  const labelsByOperation = new WeakMap<OperationDefinitionNode, OperationLabels>();
  /** As the library: the request's operation name, else the first operation's; its type. */
  const labelsOfDocument = (document: DocumentNode, requestedName: string | undefined): OperationLabels => {
    const operation = getOperationAST(document, requestedName);
    if (!operation) {
      const first = document.definitions.find(
        (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
      );
      return labelsOf({
        operationName: requestedName || first?.name?.value || 'Anonymous',
        operationType: first?.operation,
      });
    }
    let labels = labelsByOperation.get(operation);
    if (!labels) {
      labels = labelsOf({
        operationName: operation.name?.value || 'Anonymous',
        operationType: operation.operation,
      });
      labelsByOperation.set(operation, labels);
    }
    return labels;
  };
  const countErrors = (labels: OperationLabels, phase: Phase, count = 1) =>
    errors.inc({ ...labels, phase }, count);
  const countResultErrors = (labels: OperationLabels, result: ExecutionResult) => {
    if (result.errors?.length) countErrors(labels, 'execute', result.errors.length);
  };

  const recordExecution: ExecutionRecorder = {
    ended(labels, started) {
      executeSeconds.observe(
        `${labels.operationType} ${labels.operationName}`,
        (performance.now() - started) / 1000,
        () => ({ ...labels }),
      );
      executions.inc(labels);
    },
    resultErrors: countResultErrors,
  };

  // What each request's context was parsed as: only those executions are counted.
  const labelsOfContext = new WeakMap<object, OperationLabels>();

  return {
    onPluginInit({ registerContextErrorHandler }) {
      registerContextErrorHandler(({ context }) => {
        const labels = labelsOfContext.get(context);
        if (labels) countErrors(labels, 'context');
      });
    },
    onParse({ context }) {
      return ({ result }) => {
        if (result instanceof Error || result === null) {
          countErrors(labelsOf({}), 'parse');
          return;
        }
        const requestedName = (context as { params?: { operationName?: string } }).params?.operationName;
        labelsOfContext.set(context, labelsOfDocument(result, requestedName ?? undefined));
      };
    },
    onValidate({ context }) {
      const labels = labelsOfContext.get(context);
      if (!labels) return;
      return ({ valid }) => {
        if (!valid) countErrors(labels, 'validate');
      };
    },
    onExecute({ args }) {
      const labels = labelsOfContext.get(args.contextValue as object);
      if (!labels) return;
      return new ExecuteObservation(recordExecution, labels, performance.now());
    },
    onSubscribe({ args }) {
      const labels = labelsOfContext.get(args.contextValue as object);
      if (!labels) return;
      return {
        onSubscribeResult({ result }) {
          if (isAsyncIterable(result))
            return {
              onNext: ({ result: next }) => countResultErrors(labels, next),
              onEnd: () => executions.inc(labels),
            };
          countResultErrors(labels, result);
          executions.inc(labels);
          return undefined;
        },
        onSubscribeError() {
          countErrors(labels, 'subscribe');
        },
      };
    },
  };
}

interface ExecutionRecorder {
  ended(labels: OperationLabels, started: number): void;
  resultErrors(labels: OperationLabels, result: ExecutionResult): void;
}

/**
 * One execution's end hook: an object whose method is on its prototype, not two closures a
 * request (Envelop calls it as a method).
 */
class ExecuteObservation {
  constructor(
    private readonly record: ExecutionRecorder,
    private readonly labels: OperationLabels,
    private readonly started: number,
  ) {}

  onExecuteDone({ result }: { result: ExecutionResult | AsyncIterable<ExecutionResult> }) {
    const { record, labels, started } = this;
    if (isAsyncIterable(result))
      return {
        onNext: ({ result: next }: { result: ExecutionResult }) => record.resultErrors(labels, next),
        onEnd: () => record.ended(labels, started),
      };
    record.resultErrors(labels, result);
    record.ended(labels, started);
    return undefined;
  }
}
