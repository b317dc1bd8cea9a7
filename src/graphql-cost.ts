import {
  Kind,
  getOperationAST,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionNode,
  type ValueNode,
} from 'graphql';

/**
 * graphql-armor's cost formula (objects 2, scalars 1, ×1.5 per level and per fragment), with the
 * multiplier it lacks: besides a literal `first`/`last`, the size arguments given as variables and
 * every list argument (literal or variable) multiply what the field selects. `nodes(ids:)` with
 * 100 IDs costs 100 products. It needs the variables, so it runs at execution, not validation.
 */
const OBJECT_COST = 2;
const SCALAR_COST = 1;
const DEPTH_FACTOR = 1.5;
const SIZE_ARGUMENTS = new Set(['first', 'last', 'perPage']);

export function estimateCost(
  document: DocumentNode,
  operationName?: string | null,
  variables?: Record<string, unknown> | null,
): number {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  // Validation has ruled out fragment cycles; each fragment is costed once.
  const fragmentCosts = new Map<string, number>();

  const valueOf = (node: ValueNode): unknown => {
    if (node.kind === Kind.VARIABLE) return variables?.[node.name.value];
    if (node.kind === Kind.LIST) return node.values;
    if (node.kind === Kind.INT) return Number(node.value);
    return undefined;
  };

  const multiplierOf = (field: FieldNode): number => {
    let multiplier = 1;
    for (const argument of field.arguments ?? []) {
      const value = valueOf(argument.value);
      if (Array.isArray(value)) multiplier = Math.max(multiplier, value.length);
      else if (SIZE_ARGUMENTS.has(argument.name.value) && typeof value === 'number' && value > 0) {
        multiplier = Math.max(multiplier, value);
      }
    }
    return multiplier;
  };

  const childrenCost = (selections: readonly SelectionNode[]): number =>
    selections.reduce((total, child) => total + DEPTH_FACTOR * selectionCost(child), 0);

  const selectionCost = (selection: SelectionNode): number => {
    switch (selection.kind) {
      case Kind.FIELD:
        // Introspection has its own depth limit and is off in production.
        if (selection.name.value === '__schema') return 0;
        if (!selection.selectionSet) return SCALAR_COST;
        return (OBJECT_COST + childrenCost(selection.selectionSet.selections)) * multiplierOf(selection);
      case Kind.INLINE_FRAGMENT:
        return OBJECT_COST + childrenCost(selection.selectionSet.selections);
      case Kind.FRAGMENT_SPREAD: {
        const name = selection.name.value;
        let cost = fragmentCosts.get(name);
        if (cost === undefined) {
          const fragment = fragments.get(name);
          cost = fragment ? OBJECT_COST + childrenCost(fragment.selectionSet.selections) : 0;
          fragmentCosts.set(name, cost);
        }
        return SCALAR_COST + DEPTH_FACTOR * cost;
      }
    }
  };

  return operation.selectionSet.selections.reduce((total, child) => total + selectionCost(child), 0);
}
