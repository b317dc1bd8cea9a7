import { GraphQLError, type ASTVisitor, type ValidationContext } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { handleMaybePromise } from '@whatwg-node/promise-helpers';
import type { Logger } from '../logger';
import { jsonResponse } from './fetch-api';
import { invalidRequestReason } from './node-guards';
import type { Edge } from './router';

export interface ClientErrorOptions {
  /** Told of each refused request, at info level and without a stack. */
  logger: Logger;
}

/**
 * A 400 whatever the Accept header: Yoga answers spec-marked errors 200 to `application/json`
 * clients, and these are requests no server could answer.
 */
const BAD_REQUEST = { code: 'BAD_REQUEST', http: { status: 400, spec: false } };

function badRequest(message: string): GraphQLError {
  return createGraphQLError(message, { extensions: BAD_REQUEST });
}

/**
 * Operations whose root type the schema lacks (`mutation`, `subscription`) are refused during
 * validation; graphql-jit would otherwise throw "No root type" from its compiler (a 500).
 */
function supportedOperationTypesRule(context: ValidationContext): ASTVisitor {
  const schema = context.getSchema();
  return {
    OperationDefinition(node) {
      if (schema.getRootType(node.operation)) return;
      context.reportError(
        new GraphQLError(`This API has no ${node.operation} operations.`, {
          nodes: [node],
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400, spec: false } },
        }),
      );
    },
  };
}

/**
 * Client mistakes are client errors: a Host or target no URL can be built from (marked by
 * node-guards.ts), malformed JSON bodies and GET `variables` / `extensions` answer 400 with a
 * message that names the parameter and nothing else (no parser text), and unsupported operation
 * types fail validation. Logged at info, never with a stack.
 */
export function useClientErrors({ logger }: ClientErrorOptions): { plugin: Plugin; edge: Edge } {
  const edge: Edge = {
    routes: {
      // Every path the edges before it (health, metrics, the start page) did not answer.
      other(request, _url, serverContext) {
        const reason = invalidRequestReason(serverContext);
        if (!reason) return;
        logger.info({ method: request.method, reason }, 'client error');
        return jsonResponse(400, { message: reason }, { 'cache-control': 'no-store', connection: 'close' });
      },
    },
  };
  const plugin: Plugin = {
    onValidate({ addValidationRule }) {
      addValidationRule(supportedOperationTypesRule);
    },
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (!requestParser) return;
      const parse = requestParser;
      // Not async: a body node:http has already read parses without a promise turn.
      setRequestParser((incoming) =>
        handleMaybePromise(
          () => parse(incoming),
          (parsed) => parsed,
          (error: unknown) => {
            const refusal = refusalOf(error, request.method);
            if (!refusal) throw error;
            logger.info({ method: request.method, reason: refusal.message }, 'client error');
            throw refusal;
          },
        ),
      );
    },
  };
  return { plugin, edge };
}

/** The clean 400 for a parse failure; null for errors that are not the client's (e.g. a 413). */
function refusalOf(error: unknown, method: string): GraphQLError | null {
  if (error instanceof GraphQLError) {
    if (error.extensions?.code !== 'BAD_REQUEST') return null;
    return badRequest(error.message);
  }
  if (error instanceof SyntaxError) {
    return badRequest(
      method === 'GET'
        ? 'The "variables" and "extensions" query parameters must be JSON objects.'
        : 'The request body is not valid JSON.',
    );
  }
  return null;
}
