/**
 * The published /api/v1 interface (docs/spec/storefront-api.md) with the binding decisions of
 * docs/spec/contract.md, as an OpenAPI 3.1 document generated from the endpoint table
 * (src/rest/endpoints.ts) and the body schemas (src/rest/bodies.ts): nothing here repeats them.
 * It is the single machine-readable source for the docs page, the response-conformance test
 * helper and the schemathesis fuzz run, so every object schema is closed
 * (`additionalProperties: false`) and lists every field as required.
 */

import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { ErrorStatus } from '../rest/endpoint';
import { REST_ENDPOINTS } from '../rest/endpoints';
import { ErrorMessage, ValidationError } from '../rest/bodies';

// A minimal model of the OpenAPI 3.1 objects this document uses (schemas are JSON Schema 2020-12).

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonSchemaType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

export interface Schema {
  $ref?: string;
  type?: JsonSchemaType | JsonSchemaType[];
  description?: string;
  enum?: JsonValue[];
  const?: JsonValue;
  default?: JsonValue;
  examples?: JsonValue[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  minItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  allOf?: Schema[];
}

export interface Reference {
  $ref: string;
  summary?: string;
  description?: string;
}

export interface MediaType {
  schema: Schema;
  example?: JsonValue;
}

export interface Header {
  description?: string;
  required?: boolean;
  schema: Schema;
}

export interface Response {
  description: string;
  headers?: Record<string, Header | Reference>;
  content?: Record<string, MediaType>;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema: Schema;
  example?: JsonValue;
}

export interface Operation {
  operationId: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: (Parameter | Reference)[];
  responses: Record<string, Response | Reference>;
}

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
export type PathItem = Partial<Record<HttpMethod, Operation>>;

export interface SecurityScheme {
  type: 'http';
  scheme: string;
  bearerFormat?: string;
  description?: string;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; summary?: string; description?: string };
  servers?: { url: string; description?: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, PathItem>;
  webhooks?: Record<string, PathItem>;
  components: {
    schemas: Record<string, Schema>;
    responses: Record<string, Response>;
    parameters: Record<string, Parameter>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}

export interface OpenApiDocumentOptions {
  /**
   * Public base URL of the service (no `/api/v1` suffix), e.g. `https://shop.example.com`.
   * Default: none, so no `servers` entry is written and clients resolve the paths against the
   * address the document was fetched from (OpenAPI's implicit server `/`).
   */
  serverUrl?: string;
}

const errorMessageRef = { $ref: '#/components/schemas/ErrorMessage' };

/** An error body whose message is always this text. */
const fixedMessage = (message: string): Schema => ({
  allOf: [errorMessageRef, { type: 'object', properties: { message: { const: message } } }],
});

const json = (schema: Schema, example: JsonValue): Record<string, MediaType> => ({
  'application/json': { schema, example },
});

/** The shared error responses, by the status an endpoint declares. */
const ERROR_RESPONSES: Record<ErrorStatus, { name: string; response: Response }> = {
  401: {
    name: 'Unauthenticated',
    response: {
      description: 'Authentication token missing, malformed, expired or badly signed.',
      headers: {
        'WWW-Authenticate': {
          description: 'The authentication scheme the endpoint expects.',
          required: true,
          schema: { type: 'string', pattern: '^Bearer\\b' },
        },
      },
      content: json(fixedMessage('Unauthenticated.'), { message: 'Unauthenticated.' }),
    },
  },
  403: {
    name: 'Forbidden',
    response: {
      description: 'The token is valid and the order exists, but it is not visible to the caller.',
      content: json(fixedMessage('This action is unauthorized.'), {
        message: 'This action is unauthorized.',
      }),
    },
  },
  404: {
    name: 'OrderNotFound',
    response: {
      description: 'No order for the given ULID, including a path segment that is not a valid ULID.',
      content: json(errorMessageRef, { message: 'Order not found.' }),
    },
  },
  422: {
    name: 'ValidationFailed',
    response: {
      description: 'A query parameter is invalid.',
      content: json(
        { $ref: '#/components/schemas/ValidationError' },
        {
          message: 'The per page field must not be greater than 100.',
          errors: { per_page: ['The per page field must not be greater than 100.'] },
        },
      ),
    },
  },
  500: {
    name: 'ServerError',
    response: {
      description: 'Unexpected failure. The body carries no stack or driver text.',
      content: json(fixedMessage('Server Error.'), { message: 'Server Error.' }),
    },
  },
  503: {
    name: 'ServiceUnavailable',
    response: {
      description: 'The database is unreachable. The service recovers by itself when it returns.',
      headers: {
        'Retry-After': {
          description: 'When to try again (RFC 9110: delay-seconds or an HTTP-date).',
          required: true,
          schema: { type: 'string' },
        },
      },
      content: json(fixedMessage('Service Unavailable.'), { message: 'Service Unavailable.' }),
    },
  },
};

function generate(): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: '`Authorization: Bearer <JWT>`. The token’s `sub` is the customer.',
  });
  const used = new Set(REST_ENDPOINTS.flatMap((endpoint) => endpoint.errors));
  for (const status of [...used].sort()) {
    const { name, response } = ERROR_RESPONSES[status];
    registry.registerComponent('responses', name, response as never);
  }
  for (const endpoint of REST_ENDPOINTS) {
    registry.registerPath({
      method: 'get',
      path: endpoint.path,
      operationId: endpoint.operationId,
      summary: endpoint.summary,
      description: endpoint.description,
      tags: [endpoint.tag],
      ...(endpoint.secured ? { security: [{ bearerAuth: [] }] } : {}),
      request: {
        ...(endpoint.params ? { params: endpoint.params } : {}),
        query: endpoint.query as never,
      },
      responses: {
        200: {
          description: endpoint.response.description,
          content: { 'application/json': { schema: endpoint.response.schema } },
        },
        ...Object.fromEntries(
          endpoint.errors.map((status) => [
            status,
            { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` },
          ]),
        ),
      },
    });
  }
  // The error schemas are referenced only from the shared responses, so they are listed here.
  const definitions = [
    ...registry.definitions,
    { type: 'schema' as const, schema: ErrorMessage },
    { type: 'schema' as const, schema: ValidationError },
  ];
  const generated = new OpenApiGeneratorV31(definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Storefront API',
      version: '1.0.0',
      description:
        'Three read-only operations under `/api/v1`. Every response, errors included, is ' +
        '`application/json; charset=utf-8`. Timestamps are ISO 8601 in UTC with an explicit offset ' +
        '(`2026-03-14T09:26:53+00:00`). Unknown paths answer 404 `{"message":"Not Found."}`; a wrong ' +
        'method answers 405 with an `Allow` header.',
    },
    tags: [
      { name: 'Orders', description: 'Orders of the authenticated customer.' },
      { name: 'Products', description: 'The public product catalogue.' },
    ],
  });
  const document = JSON.parse(JSON.stringify(generated)) as OpenApiDocument;
  // OpenAPI 3.1 has `info.summary`; the generator's types do not know it yet.
  document.info = { ...document.info, summary: 'Orders and product catalogue of a digital-goods store.' };
  document.components.parameters ??= {};
  if (Object.keys(document.webhooks ?? {}).length === 0) delete document.webhooks;
  return document;
}

/** Generated once: the table and the schemas do not change while the process runs. */
let generated: OpenApiDocument | undefined;

export function createOpenApiDocument(options: OpenApiDocumentOptions = {}): OpenApiDocument {
  generated ??= generate();
  // Cloned so that a caller changing its document never changes the next one.
  const document = structuredClone(generated);
  const { serverUrl } = options;
  return serverUrl ? { ...document, servers: [{ url: serverUrl.replace(/\/+$/, '') }] } : document;
}
