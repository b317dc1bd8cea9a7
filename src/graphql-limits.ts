import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { GraphQLError, ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

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
   * armor's estimate: objects 2, scalars 1, ×1.5 per level and per fragment, × a literal first/last.
   * One 100-product page with every field costs ≈ 19,000 inline and ≈ 78,000 through fragments.
   * A `first` passed as a variable escapes the multiplier, but resolvers cap it at 100 anyway.
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

export function useGraphqlLimits(options: { hideFieldSuggestions: boolean }): Plugin {
  return EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: false, ...report },
    // armor exempts `__typename` by default: 500 aliases of it would be 500 free fields.
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, allowList: [], ...report },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...report },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, ignoreIntrospection: true, ...report },
    blockFieldSuggestion: { enabled: options.hideFieldSuggestions },
  }) as Plugin;
}
