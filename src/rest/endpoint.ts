import type { z } from 'zod';

/** What a body builder may know of the request besides the operation's data. */
export interface RequestFacts {
  /** The validated query in its canonical form (src/rest/query.ts, canonicalQuery). */
  query: URLSearchParams;
  /** The matched request path, without a trailing slash. */
  path: string;
  /** Absolute base of links: PUBLIC_BASE_URL or the request's origin. */
  baseUrl: string;
}

/** Statuses an endpoint can answer besides 200; each has one shared OpenAPI response. */
export type ErrorStatus = 401 | 403 | 404 | 422 | 500 | 503;

/**
 * One /api/v1 endpoint, declared once: routing, query validation, the GraphQL operation it runs,
 * how its data becomes the contract body, its statuses and its OpenAPI metadata.
 */
export interface Endpoint<Query = unknown> {
  /** OpenAPI path template; also the route label of logs and metrics. */
  path: string;
  /** Path parameters of a request path (no trailing slash), or null when it is not this endpoint. */
  match(path: string): Record<string, string> | null;
  operationId: string;
  summary: string;
  description: string;
  tag: 'Orders' | 'Products';
  /** Needs a bearer token. */
  secured?: boolean;
  /** Path parameters, for the document (each a zod string with its description). */
  params?: z.ZodObject;
  /** The query parameters: validation, messages and documentation. Unknown parameters are ignored. */
  query: z.ZodType<Query>;
  /** The GraphQL operation, parsed and validated against the schema once at start. */
  document: string;
  variables(query: Query, params: Record<string, string>): Record<string, unknown>;
  /** The contract body from the operation's data. */
  body(data: Record<string, unknown>, request: RequestFacts): unknown;
  response: { description: string; schema: z.ZodType };
  errors: ErrorStatus[];
  /** Public and the same for everyone: finished bodies may be cached by URL and carry an ETag. */
  cacheable: boolean;
}

/** Keeps each declaration's query type for its own `variables`, and erases it in the table. */
export const defineEndpoint = <Query>(endpoint: Endpoint<Query>): Endpoint => endpoint as unknown as Endpoint;
