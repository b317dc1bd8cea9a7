import type { z } from 'zod';

/**
 * A response body's zod schema is also the GraphQL selection that fills it, by one naming rule:
 * the /api/v1 property `snake_case` reads the schema field `snakeCase`, and `id` reads
 * `databaseId` (GraphQL's `id` is the global Relay id). The body names are aliases, so the result
 * needs no renaming.
 */

export function graphqlFieldOf(property: string): string {
  if (property === 'id') return 'databaseId';
  return property.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const def = schema._zod.def as {
    type: string;
    shape?: Record<string, z.ZodType>;
    innerType?: z.ZodType;
    element?: z.ZodType;
  };
  if (def.type === 'object') return def.shape;
  if (def.type === 'nullable' || def.type === 'optional') return objectShape(def.innerType!);
  if (def.type === 'array') return objectShape(def.element!);
  return undefined;
}

/** `{ id: databaseId name … }` for an object schema, recursively, with aliases where names differ. */
export function selectionOf(schema: z.ZodType): string {
  const shape = objectShape(schema);
  if (!shape) throw new Error('a selection needs an object schema');
  const fields = Object.entries(shape).map(([name, property]) => {
    const source = graphqlFieldOf(name);
    const head = source === name ? name : `${name}: ${source}`;
    return objectShape(property) ? `${head} ${selectionOf(property)}` : head;
  });
  return `{ ${fields.join(' ')} }`;
}
