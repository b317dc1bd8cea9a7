import {
  Kind,
  getOperationAST,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import { fieldPricing } from './graphql-cost-arguments';

export { SHORT_WORD_COST, WORD_COST } from './graphql-cost-arguments';

/**
 * graphql-armor's cost formula (objects 2, scalars 1, ×1.5 per level and per fragment), with the
 * multiplier it lacks: besides a literal `first`/`last`, the size arguments given as variables and
 * every list argument (literal or variable) multiply what the field selects. `nodes(ids:)` with
 * 100 IDs costs 100 products. A variable the request leaves out counts at its default, as it
 * runs. It needs the variables, so it runs at execution, not validation.
 *
 * On top, every scan of the collection costs SCAN_COST, whatever the page size: a text search
 * (`search`, `term`), a count of a filtered set (`totalCount` or a numbered page's `total` with a
 * search, a category or an order filter; an unfiltered count is the collection's metadata) and
 * the catalogue's groupings (`categories`, `brands`). Twenty `products(first: 1, search: …)
 * { totalCount }` cost 70 before and kept the database busy for minutes; each is two scans now.
 * Scans are added, not multiplied: in this schema every scanning field is at the root (or under
 * the single `viewer`). A text search's further words cost WORD_COST each and its words of 1–2
 * characters (no grams: a scan) SHORT_WORD_COST each; a numbered page costs the products it skips
 * (÷ 10). The /api/v1 operations are priced by the same estimate (issue 28 row 8: one REST client
 * held 1.75 of the database's 2 cores with 30-word and 1-character searches).
 */
const OBJECT_COST = 2;
const SCALAR_COST = 1;
const DEPTH_FACTOR = 1.5;
/** About half a 100-product page with every field: at most 15 scans fit under the cost limit. */
export const SCAN_COST = 10_000;

interface Estimate {
  cost: number;
  scans: number;
  /** Database work priced directly (search words, skipped products), added like scans. */
  extra: number;
}

export function estimateCost(
  document: DocumentNode,
  operationName?: string | null,
  variables?: Record<string, unknown> | null,
): number {
  const { cost, scans, extra } = estimate(document, operationName, variables);
  return cost + scans * SCAN_COST + extra;
}

/**
 * Only what the operation makes the database do (scans, search words, skipped products), not the
 * size of what it selects: the price of the /api/v1 operations, whose pages of up to 100 products
 * read by key cost the database next to nothing.
 */
export function estimateDatabaseWork(
  document: DocumentNode,
  operationName?: string | null,
  variables?: Record<string, unknown> | null,
): number {
  const { scans, extra } = estimate(document, operationName, variables);
  return scans * SCAN_COST + extra;
}

/** Estimates kept per operation of a document; more distinct variable shapes start it afresh. */
const SHAPES_PER_OPERATION = 64;

interface OperationEstimates {
  variableNames: string[];
  byShape: Map<string, Estimate>;
}

/**
 * Per operation of a parsed document (Yoga's cache and the REST operations hold them): keyed by
 * the operation itself, not by the name a request gives, so names no operation has add nothing.
 */
const estimatesByOperation = new WeakMap<OperationDefinitionNode, OperationEstimates>();

/**
 * All the estimate can see of a variable's value: absent (its default applies), undefined, null, a list's length, a number, a
 * string's words and short words (a blank string has none), or "something else given". Two
 * requests whose variables have the same shapes cost the same, so an order's ULID or a search's
 * own letters do not make a new estimate.
 */
function shapeOf(value: unknown): string {
  if (value === undefined) return 'U';
  if (value === null) return 'N';
  if (Array.isArray(value)) return `A${value.length}`;
  if (typeof value === 'number') return `n${value}`;
  if (typeof value !== 'string') return 'O';
  const words = value.trim().split(/\s+/).filter(Boolean);
  return `S${words.length}:${words.filter((word) => [...word].length <= 2).length}`;
}

/**
 * The estimate walks the whole document; the same operation with variables of the same shapes
 * (see shapeOf) is walked once. Rate limits and the cost limit both price each request.
 */
function estimate(
  document: DocumentNode,
  operationName?: string | null,
  variables?: Record<string, unknown> | null,
): Estimate {
  const operation = getOperationAST(document, operationName);
  if (!operation) return { cost: 0, scans: 0, extra: 0 };
  let known = estimatesByOperation.get(operation);
  if (!known) {
    known = {
      variableNames: (operation.variableDefinitions ?? []).map(
        (definition) => definition.variable.name.value,
      ),
      byShape: new Map(),
    };
    estimatesByOperation.set(operation, known);
  }
  const shape = known.variableNames
    .map((name) => (variables && Object.hasOwn(variables, name) ? shapeOf(variables[name]) : '-'))
    .join('|');
  let result = known.byShape.get(shape);
  if (!result) {
    if (known.byShape.size >= SHAPES_PER_OPERATION) known.byShape.clear();
    result = walk(document, operation, variables);
    known.byShape.set(shape, result);
  }
  return result;
}

function walk(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables?: Record<string, unknown> | null,
): Estimate {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  // Validation has ruled out fragment cycles; each fragment is costed once.
  const fragmentCosts = new Map<string, Estimate>();
  const { ownExtra, ownScans, multiplierOf } = fieldPricing(fragments, operation, variables);

  const childrenEstimate = (selections: readonly SelectionNode[]): Estimate =>
    selections.reduce<Estimate>(
      (total, child) => {
        const { cost, scans, extra } = selectionEstimate(child);
        return {
          cost: total.cost + DEPTH_FACTOR * cost,
          scans: total.scans + scans,
          extra: total.extra + extra,
        };
      },
      { cost: 0, scans: 0, extra: 0 },
    );

  const selectionEstimate = (selection: SelectionNode): Estimate => {
    switch (selection.kind) {
      case Kind.FIELD: {
        // Introspection has its own depth limit and is off in production.
        if (selection.name.value === '__schema') return { cost: 0, scans: 0, extra: 0 };
        const scans = ownScans(selection);
        if (!selection.selectionSet) return { cost: SCALAR_COST, scans, extra: ownExtra(selection) };
        const children = childrenEstimate(selection.selectionSet.selections);
        return {
          cost: (OBJECT_COST + children.cost) * multiplierOf(selection),
          scans: scans + children.scans,
          extra: ownExtra(selection) + children.extra,
        };
      }
      case Kind.INLINE_FRAGMENT: {
        const children = childrenEstimate(selection.selectionSet.selections);
        return { cost: OBJECT_COST + children.cost, scans: children.scans, extra: children.extra };
      }
      case Kind.FRAGMENT_SPREAD: {
        const name = selection.name.value;
        let estimate = fragmentCosts.get(name);
        if (estimate === undefined) {
          const fragment = fragments.get(name);
          const children = fragment ? childrenEstimate(fragment.selectionSet.selections) : undefined;
          estimate = children
            ? { cost: OBJECT_COST + children.cost, scans: children.scans, extra: children.extra }
            : { cost: 0, scans: 0, extra: 0 };
          fragmentCosts.set(name, estimate);
        }
        return {
          cost: SCALAR_COST + DEPTH_FACTOR * estimate.cost,
          scans: estimate.scans,
          extra: estimate.extra,
        };
      }
    }
  };

  const total = { cost: 0, scans: 0, extra: 0 };
  for (const selection of operation.selectionSet.selections) {
    const { cost, scans, extra } = selectionEstimate(selection);
    total.cost += cost;
    total.scans += scans;
    total.extra += extra;
  }
  return total;
}
