import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './index';

/** The sorted SDL as committed in schema.graphql. */
export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
