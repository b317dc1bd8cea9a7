import {
  GraphQLError,
  Kind,
  OperationTypeNode,
  type ASTVisitor,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

const CONDITIONS = new Set(['skip', 'include']);

/**
 * The GraphQL specification (September 2025, "Single Root Field"): a subscription's root
 * selection may not use `@skip` or `@include`, on a field or on a fragment that holds one. With
 * them graphql-js 16 could select no root field at all, and its subscribe then threw a TypeError
 * (an HTTP 500 and an error log line per request). graphql-js 17 has this rule; 16 does not.
 */
export function SubscriptionRootConditionsRule(context: ValidationContext): ASTVisitor {
  const check = (selectionSet: SelectionSetNode, seen: Set<string>): boolean => {
    for (const selection of selectionSet.selections) {
      if (selection.directives?.some((directive) => CONDITIONS.has(directive.name.value))) return true;
      if (selection.kind === Kind.INLINE_FRAGMENT && check(selection.selectionSet, seen)) return true;
      if (selection.kind === Kind.FRAGMENT_SPREAD && !seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = context.getFragment(selection.name.value);
        if (fragment && check(fragment.selectionSet, seen)) return true;
      }
    }
    return false;
  };
  return {
    OperationDefinition(node) {
      if (node.operation !== OperationTypeNode.SUBSCRIPTION) return;
      if (!check(node.selectionSet, new Set())) return;
      const name = node.name ? `Subscription "${node.name.value}"` : 'Anonymous Subscription';
      context.reportError(
        new GraphQLError(`${name} must not use @skip or @include directives in the top level selection.`, {
          nodes: node,
          // A 400 whatever the Accept header, as the other documents no server could run.
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400, spec: false } },
        }),
      );
    },
  };
}

export function useSubscriptionRootRule(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(SubscriptionRootConditionsRule);
    },
  };
}
