import { MAX_CONNECTION_SIZE } from '../catalog/product-query';
import { badUserInput, type FieldErrors } from '../errors';

/** The Relay arguments every connection field takes. */
export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/** Sizes within 0..100 and no empty cursors, the same messages for every connection. */
export function checkConnectionArgs(args: ConnectionArgs, errors: FieldErrors = {}): void {
  for (const name of ['first', 'last'] as const) {
    const size = args[name];
    if (size != null && (size < 0 || size > MAX_CONNECTION_SIZE)) {
      (errors[name] ??= []).push(`The ${name} argument must be between 0 and ${MAX_CONNECTION_SIZE}.`);
    }
  }
  for (const name of ['after', 'before'] as const) {
    // Pothos would read an empty cursor as "no cursor"; it is as invalid as any other garbage.
    if (args[name] === '') errors[name] = [`The ${name} cursor is not valid.`];
  }
  if (Object.keys(errors).length > 0) throw badUserInput(errors);
}

/** An empty page has no cursors: null, as the connection spec says, never Pothos's ''. */
export function withNullCursors<
  C extends { pageInfo: { startCursor?: string | null; endCursor?: string | null } },
>(connection: C): C {
  const { pageInfo } = connection;
  return {
    ...connection,
    pageInfo: {
      ...pageInfo,
      startCursor: pageInfo.startCursor || null,
      endCursor: pageInfo.endCursor || null,
    },
  };
}
