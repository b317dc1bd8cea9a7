import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import type { Plugin } from 'graphql-yoga';

/**
 * Limits on client-sent GraphQL documents, checked during validation (before any resolver runs).
 * The deepest useful query (products → edges → node → variant → price → formatted) has depth 6;
 * every /api/v1 operation is pre-validated at start-up and skips these checks.
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxAliases: 20,
  maxDirectives: 10,
  maxTokens: 2_000,
  maxCost: 5_000,
  /** Operations per batched HTTP request. */
  maxBatch: 10,
} as const;

export function useGraphqlLimits(options: { hideFieldSuggestions: boolean }): Plugin {
  return EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true },
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    costLimit: { maxCost: GRAPHQL_LIMITS.maxCost, ignoreIntrospection: true },
    blockFieldSuggestion: { enabled: options.hideFieldSuggestions },
  }) as Plugin;
}
