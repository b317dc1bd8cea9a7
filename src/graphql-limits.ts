import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { validate, type ExecutionArgs, type GraphQLError, type ValidationContext } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import { estimateCost } from './graphql-cost';
import { documentNestsDeeperThan, nestsDeeperThan } from './graphql-nesting';
import { useSubscriptionRootRule } from './graphql-subscription-root';

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
   * Brackets (`{`, `(`, `[`) open at once in a document: graphql-js parses recursively and ran out
   * of stack at ~1,500 nested list literals, before the token limit. maxDepth fields, each with
   * arguments holding input objects and lists, stay far below.
   */
  maxNesting: 100,
  /**
   * Arrays and objects nested in a request's `variables`, `extensions` and `operationName`: keying
   * and coercing them recurse (JSON.stringify overflowed at ~5,000). Our input types nest 3 deep.
   */
  maxParamsDepth: 32,
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
  /** No "Did you mean …?" of any kind (fields, arguments, types, enum values, fragments). */
  hideSuggestions: boolean;
  /** Executions whose documents the server wrote itself (the /api/v1 operations). */
  isTrusted: (context: unknown) => boolean;
}

export function useGraphqlLimits({ hideSuggestions, isTrusted }: GraphqlLimitOptions): Plugin {
  const armor = EnvelopArmorPlugin({
    maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: false, ...report },
    // armor exempts `__typename` by default: 500 aliases of it would be 500 free fields.
    maxAliases: { n: GRAPHQL_LIMITS.maxAliases, allowList: [], ...report },
    maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...report },
    maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
    costLimit: { enabled: false },
    // Its mask covers `Did you mean "x"?` only: graphql-js's own option below hides the rest.
    blockFieldSuggestion: { enabled: hideSuggestions },
  }) as Plugin;
  const cost = useQueryCost(GRAPHQL_LIMITS.maxCost, isTrusted);
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(armor);
      addPlugin(useNestingLimits());
      addPlugin(useSubscriptionRootRule());
      if (hideSuggestions) addPlugin(useNoSuggestions());
      addPlugin(cost);
    },
  };
}

const BAD_REQUEST = { code: 'BAD_REQUEST', http: { status: 400, spec: false } };

function tooNested(message: string): GraphQLError {
  return createGraphQLError(message, { extensions: BAD_REQUEST });
}

/**
 * Bounds nesting as soon as the request is parsed, before anything recursive runs: the response
 * cache keys the parameters before validation, and graphql-js parses documents recursively. The
 * measures themselves do not recurse (src/graphql-nesting.ts). A 400 whatever the Accept header:
 * a request no server would serve, not a document with a mistake in it.
 */
function useNestingLimits(): Plugin {
  const { maxNesting, maxTokens, maxParamsDepth } = GRAPHQL_LIMITS;
  function check(params: unknown): void {
    if (nestsDeeperThan(params, maxParamsDepth + 1))
      throw tooNested(
        `The request's variables, extensions or operation name nest deeper than ${maxParamsDepth} levels.`,
      );
    const { query } = params as { query?: unknown };
    if (typeof query === 'string' && documentNestsDeeperThan(query, maxNesting, maxTokens))
      throw tooNested(`The document nests deeper than ${maxNesting} levels.`);
  }
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      const parse = requestParser;
      // Not async: a body node:http has already read parses without a promise turn.
      setRequestParser((request) =>
        handleMaybePromise(
          () => parse(request),
          (parsed) => {
            if (Array.isArray(parsed)) parsed.forEach(check);
            else check(parsed);
            return parsed;
          },
        ),
      );
    },
  };
}

/** graphql-js's wording of every suggestion (jsutils/didYouMean): ` Did you mean "A" or "B"?`. */
const SUGGESTION = / Did you mean [^?]*\?/g;

/**
 * No message names what the schema has: graphql-js's `hideSuggestions` in validation (field,
 * argument, type, enum value and inline fragment hints); the coercion of variables ignores that
 * option (@graphql-tools/executor does not pass it on), so its hints are cut from the result.
 */
function useNoSuggestions(): Plugin {
  return {
    onValidate({ setValidationFn }) {
      setValidationFn((schema, document, rules) =>
        validate(schema, document, rules, { hideSuggestions: true }),
      );
    },
    onExecute() {
      return {
        onExecuteDone({ result }) {
          if (!('errors' in result) || !result.errors) return;
          for (const error of result.errors) {
            if (error.message.includes(' Did you mean '))
              (error as { message: string }).message = error.message.replace(SUGGESTION, '');
          }
        },
      };
    },
  };
}
