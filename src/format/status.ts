/**
 * Order statuses are stored, and served on /api/v1, in lower case (`partially_fulfilled`);
 * GraphQL enum values name them in upper case (`PARTIALLY_FULFILLED`). The one mapping both ways.
 */
export const statusEnumName = <T extends string>(status: T): Uppercase<T> =>
  status.toUpperCase() as Uppercase<T>;

export const statusFromEnumName = (name: string): string => name.toLowerCase();
