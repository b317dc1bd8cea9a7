import { AssertionError } from 'node:assert';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import {
  createOpenApiDocument,
  type HttpMethod,
  type Reference,
  type Response,
} from '../../src/docs/openapi';

/**
 * Checks real /api/v1 responses against the OpenAPI document: the operation documents the status,
 * the Content-Type is the documented media type with `charset=utf-8` (contract: every /api/v1
 * response), every documented required header is present and matches its schema, and the body
 * matches the response schema (JSON Schema 2020-12, as OpenAPI 3.1 uses, with formats checked).
 */

const DOCUMENT_ID = 'https://storefront.invalid/openapi.json';

const document = createOpenApiDocument({});

/** Compiled validators for JSON pointers into the document, built on first use. */
let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (validate) return validate;
  if (!ajv) {
    ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    // The document's schemas refer to each other as `#/components/schemas/X`: adding the document's
    // components and paths under one $id lets those references, and pointers to any response
    // schema in it, resolve. The two top-level members are annotations, not validation keywords.
    ajv.addKeyword('components').addKeyword('paths');
    ajv.addSchema({ $id: DOCUMENT_ID, components: document.components, paths: document.paths });
  }
  validate = ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
  if (!validate) throw new Error(`no schema at ${pointer} in the OpenAPI document`);
  validators.set(pointer, validate);
  return validate;
}

const escapePointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
const pointer = (...tokens: string[]) => tokens.map((token) => `/${escapePointer(token)}`).join('');

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map(
      (error) =>
        `  ${error.instancePath || '(root)'} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
    )
    .join('\n');
}

function fail(message: string, actual?: unknown, expected?: unknown): never {
  throw new AssertionError({ message, actual, expected, operator: 'assertConformsToOpenApi' });
}

export type ResponseHeaders = Headers | Record<string, string | string[] | number | undefined>;

function headerGetter(headers: ResponseHeaders): (name: string) => string | undefined {
  if (headers instanceof Headers) return (name) => headers.get(name) ?? undefined;
  const lowered = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return (name) => {
    const value = lowered.get(name.toLowerCase());
    if (value === undefined) return undefined;
    return Array.isArray(value) ? value.join(', ') : String(value);
  };
}

/** The response object, and its JSON pointer, after following a `#/components/responses/X` reference. */
function resolveResponse(response: Response | Reference, at: string): { response: Response; at: string } {
  if (!('$ref' in response)) return { response, at };
  const name = /^#\/components\/responses\/([^/]+)$/.exec(response.$ref)?.[1];
  const target = name === undefined ? undefined : document.components.responses[name];
  if (!name || !target) throw new Error(`unresolvable response reference ${response.$ref}`);
  return { response: target, at: pointer('components', 'responses', name) };
}

/**
 * Asserts that one real response of the REST API conforms to the OpenAPI document.
 *
 * @param method       HTTP method, any case (`'GET'`)
 * @param pathTemplate the documented path, not the requested one (`'/api/v1/orders/{order}'`)
 * @param status       the response status
 * @param headers      the response headers (a fetch `Headers`, or a plain object as node:http gives)
 * @param bodyJson     the parsed JSON body
 */
export function assertConformsToOpenApi(
  method: string,
  pathTemplate: string,
  status: number,
  headers: ResponseHeaders,
  bodyJson: unknown,
): void {
  const where = `${method.toUpperCase()} ${pathTemplate} → ${status}`;
  const httpMethod = method.toLowerCase() as HttpMethod;
  const operation = document.paths[pathTemplate]?.[httpMethod];
  if (!operation) fail(`${where}: the document has no operation ${method.toUpperCase()} ${pathTemplate}`);

  const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find(
    (key) => operation.responses[key] !== undefined,
  );
  if (!statusKey) {
    fail(`${where}: status ${status} is not documented`, status, Object.keys(operation.responses));
  }
  const { response, at } = resolveResponse(
    operation.responses[statusKey]!,
    pointer('paths', pathTemplate, httpMethod, 'responses', statusKey),
  );

  const header = headerGetter(headers);

  for (const [name, spec] of Object.entries(response.headers ?? {})) {
    if ('$ref' in spec) throw new Error(`${where}: header references are not supported (${name})`);
    const value = header(name);
    if (value === undefined) {
      if (spec.required) fail(`${where}: required header ${name} is missing`);
      continue;
    }
    const validate = validatorAt(`${at}${pointer('headers', name, 'schema')}`);
    if (!validate(value)) {
      fail(`${where}: header ${name} does not match its schema:\n${describeErrors(validate.errors)}`, value);
    }
  }

  const content = response.content ?? {};
  const mediaTypes = Object.keys(content);
  if (mediaTypes.length === 0) return;

  const contentType = header('content-type');
  if (contentType === undefined) fail(`${where}: no Content-Type header`, undefined, mediaTypes);
  const [mediaType = '', ...parameters] = contentType.split(';').map((part) => part.trim());
  if (!mediaTypes.includes(mediaType.toLowerCase())) {
    fail(`${where}: Content-Type ${contentType} is not documented`, contentType, mediaTypes);
  }
  const charset = parameters.find((parameter) => /^charset=/i.test(parameter));
  if (!charset || charset.slice('charset='.length).replace(/"/g, '').toLowerCase() !== 'utf-8') {
    fail(`${where}: Content-Type ${contentType} must say charset=utf-8`, contentType);
  }

  const validate = validatorAt(`${at}${pointer('content', mediaType.toLowerCase(), 'schema')}`);
  if (!validate(bodyJson)) {
    fail(`${where}: body does not match the response schema:\n${describeErrors(validate.errors)}`, bodyJson);
  }
}
