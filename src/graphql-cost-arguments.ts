import {
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type ValueNode,
} from 'graphql';

/** What a field's arguments add to its price (src/graphql-cost.ts says what each costs and why). */

const SIZE_ARGUMENTS = new Set(['first', 'last', 'perPage']);
/** Fields that group the whole catalogue. */
const GROUPING_FIELDS = new Set(['categories', 'brands']);
/** Fields that always count their (filtered) set: the numbered pages' `total`. */
const COUNTING_FIELDS = new Set(['productPage', 'searchProductPage']);
/** Arguments that filter by text: a scan when not blank. */
const TEXT_SEARCH_ARGUMENTS = new Set(['search', 'term']);
/** Each word of a text search after the first: one more pass over the matching grams. */
export const WORD_COST = 2_000;
/** A word of 1–2 characters has no grams: it is matched by scanning every product. */
export const SHORT_WORD_COST = 20_000;
/** Products a numbered page skips before its own, per unit of cost (a skip of 100,000 ≈ a scan). */
const SKIPPED_PER_COST = 10;
/** Arguments that narrow a set, so counting it reads the matching documents. */
const FILTER_ARGUMENTS = new Set([...TEXT_SEARCH_ARGUMENTS, 'category', 'filter']);

/**
 * Readers of one operation's field arguments, with the request's variables applied (an absent
 * variable at its default, as it runs): the scans a field makes, the work priced directly, and
 * what multiplies what it selects.
 */
export function fieldPricing(
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  operation: OperationDefinitionNode,
  variables?: Record<string, unknown> | null,
) {
  const defaults = new Map<string, ValueNode>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) defaults.set(definition.variable.name.value, definition.defaultValue);
  }

  const valueOf = (node: ValueNode): unknown => {
    if (node.kind === Kind.VARIABLE) {
      const name = node.name.value;
      // Coercion: an absent variable takes its default (an explicit null stays null).
      if (variables && Object.hasOwn(variables, name)) return variables[name];
      const fallback = defaults.get(name);
      return fallback ? valueOf(fallback) : undefined;
    }
    if (node.kind === Kind.LIST) return node.values;
    if (node.kind === Kind.INT) return Number(node.value);
    if (node.kind === Kind.STRING) return node.value;
    if (node.kind === Kind.OBJECT) return node.fields.length > 0 ? node : undefined;
    return undefined;
  };

  const given = (value: unknown) =>
    value !== undefined && value !== null && (typeof value !== 'string' || value.trim() !== '');

  /** Whether a selection set asks for `name` (directly or through fragments at that level). */
  const selects = (selections: readonly SelectionNode[], name: string, seen = new Set<string>()): boolean =>
    selections.some((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === name;
      if (selection.kind === Kind.INLINE_FRAGMENT)
        return selects(selection.selectionSet.selections, name, seen);
      const fragment = fragments.get(selection.name.value);
      if (!fragment || seen.has(fragment.name.value)) return false;
      seen.add(fragment.name.value);
      return selects(fragment.selectionSet.selections, name, seen);
    });

  /** What a field's text search words and page depth add beyond its scans. */
  const ownExtra = (field: FieldNode): number => {
    let extra = 0;
    let perPage = 0;
    let page = 1;
    for (const argument of field.arguments ?? []) {
      const name = argument.name.value;
      const value = valueOf(argument.value);
      if (TEXT_SEARCH_ARGUMENTS.has(name) && typeof value === 'string') {
        const words = value.trim().split(/\s+/).filter(Boolean);
        extra += Math.max(0, words.length - 1) * WORD_COST;
        extra += words.filter((word) => [...word].length <= 2).length * SHORT_WORD_COST;
      }
      if (name === 'perPage' && typeof value === 'number') perPage = value;
      if (name === 'page' && typeof value === 'number') page = value;
    }
    return extra + (Math.max(0, page - 1) * perPage) / SKIPPED_PER_COST;
  };

  const ownScans = (field: FieldNode): number => {
    const name = field.name.value;
    if (GROUPING_FIELDS.has(name)) return 1;
    let scans = 0;
    // A customer's orders are always a filtered set.
    let filtered = name === 'orders';
    for (const argument of field.arguments ?? []) {
      if (!FILTER_ARGUMENTS.has(argument.name.value) || !given(valueOf(argument.value))) continue;
      filtered = true;
      if (TEXT_SEARCH_ARGUMENTS.has(argument.name.value)) scans += 1;
    }
    const counts =
      COUNTING_FIELDS.has(name) ||
      (field.selectionSet !== undefined && selects(field.selectionSet.selections, 'totalCount'));
    if (filtered && counts) scans += 1;
    return scans;
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

  return { ownExtra, ownScans, multiplierOf };
}
