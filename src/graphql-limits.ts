import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { ExecutionArgs, GraphQLError, ValidationContext } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { estimateCost } from './graphql-cost';

/**
 * Limits on client-sent GraphQL documents, checked during validation (before any resolver runs).
 * The deepest useful query (products → edges → node → variant → price → formatted) has depth 6;
 * every /api/v1 operation is pre-validated at start-up and skips these checks.
 */
export const GRAPHQL_LIMITS = {
  /** Our schema is not recursive (a query nests at most 7 levels); GraphiQL's introspection nests 21. */
  maxDepth: 24,
  maxAliases: 20,
  maxDirectives: 10,
  maxTokens: 2_000,
  /**
   * src/graphql-cost.ts: objects 2, scalars 1, ×1.5 per level and per fragment, × first/last/perPage
   * and × the length of list arguments (`nodes(ids:)`), literal, variable or default; + 10,000 per
   * scan (text search, filtered count, grouping). One 100-product page with every field costs
   * ≈ 19,000 inline and ≈ 78,000 through fragments.
   */
  maxCost: 150_000,
  /** Operations per batched HTTP request. */
  maxBatch: 10,
} as const;

// Report a rejection as a validation error instead of throwing, which graphql-js would turn into
// an opaque "Validation aborted.".
const report = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)],
};

/**
 * Refuses an operation whose estimated cost (which needs the variables) is over the limit. A
 * subscription is checked once, when it starts: each event then runs its selection set again.
 */
function useQueryCost(maxCost: number, skip: (context: unknown) => boolean): Plugin {
  const refusal = (cost: number) => ({
    errors: [
      createGraphQLError(`Query Cost limit of ${maxCost} exceeded, found ${Math.ceil(cost)}.`, {
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400, spec: true } },
      }),
    ],
  });
  const costOf = (args: ExecutionArgs) =>
    skip(args.contextValue) ? 0 : estimateCost(args.document, args.operationName, args.variableValues);
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const cost = costOf(args);
      if (cost > maxCost) setResultAndStopExecution(refusal(cost));
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const cost = costOf(args);
      if (cost > maxCost) setResultAndStopExecution(refusal(cost));
    },
  };
}

export interface GraphqlLimitOptions {
  hideFieldSuggestions: boolean;
  /** Executions whose documents the server wrote itself (the /api/v1 operations). */
  isTrusted: (context: unknown) => boolean;
}

export function useGraphqlLimits({ hideFieldSuggestions, isTrusted }: GraphqlLimitOptions): Plugin {
  const armor = EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: false, ...report },
    // armor exempts `__typename` by default: 500 aliases of it would be 500 free fields.
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, allowList: [], ...report },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...report },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: hideFieldSuggestions },
  }) as Plugin;
  const cost = useQueryCost(GRAPHQL_LIMITS.maxCost, isTrusted);
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(armor);
      addPlugin(cost);
    },
  };
}
