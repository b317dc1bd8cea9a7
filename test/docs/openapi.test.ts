import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { createOpenApiDocument, type Parameter, type Reference, type Schema } from '../../src/docs/openapi';

const document = createOpenApiDocument({});
const { schemas } = document.components;

/** Every object schema in a tree of schemas, with where it is. */
function objectSchemas(schema: Schema, at: string): { schema: Schema; at: string }[] {
  const found = schema.type === 'object' && schema.properties ? [{ schema, at }] : [];
  const children: [string, Schema][] = [
    ...Object.entries(schema.properties ?? {}),
    ...(schema.items ? ([['[]', schema.items]] as [string, Schema][]) : []),
    ...(typeof schema.additionalProperties === 'object'
      ? ([['{}', schema.additionalProperties]] as [string, Schema][])
      : []),
    ...(schema.allOf ?? []).map((child, index): [string, Schema] => [`allOf/${index}`, child]),
  ];
  return [...found, ...children.flatMap(([name, child]) => objectSchemas(child, `${at}.${name}`))];
}

function parameters(path: string): Parameter[] {
  const list: (Parameter | Reference)[] = document.paths[path]?.get?.parameters ?? [];
  return list.map((parameter) => {
    if (!('$ref' in parameter)) return parameter;
    const name = parameter.$ref.replace('#/components/parameters/', '');
    const resolved = document.components.parameters[name];
    if (!resolved) throw new Error(`unresolved ${parameter.$ref}`);
    return resolved;
  });
}

const property = (schema: string, name: string) => schemas[schema]?.properties?.[name];

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(JSON.stringify(document)) as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has only well-formed JSON Schema 2020-12 schemas (the validator above does not look inside them)', () => {
    const ajv = new Ajv2020({ strict: true });
    addFormats(ajv);
    ajv.addKeyword('components');
    ajv.addSchema({ $id: 'https://storefront.invalid/openapi.json', components: document.components });
    const inline: [string, Schema][] = [
      ...Object.entries(document.components.parameters).map(([name, p]): [string, Schema] => [
        name,
        p.schema,
      ]),
      ...Object.values(document.paths).flatMap((item) =>
        (item.get?.parameters ?? []).flatMap((p): [string, Schema][] =>
          '$ref' in p ? [] : [[p.name, p.schema]],
        ),
      ),
    ];
    for (const [name, schema] of inline) {
      expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText()}`).toBe(true);
      expect(() => ajv.compile(schema), name).not.toThrow();
    }
    for (const name of Object.keys(schemas)) {
      const pointer = `https://storefront.invalid/openapi.json#/components/schemas/${name}`;
      expect(ajv.validateSchema(schemas[name]!), `${name}: ${ajv.errorsText()}`).toBe(true);
      expect(() => ajv.getSchema(pointer), name).not.toThrow();
      expect(ajv.getSchema(pointer), name).toBeTypeOf('function');
    }
  });

  it('documents exactly the three GET operations of /api/v1', () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/api/v1/orders/{order}',
      '/api/v1/products',
      '/api/v1/products/search',
    ]);
    for (const item of Object.values(document.paths)) expect(Object.keys(item)).toEqual(['get']);
  });

  it('closes every object schema and requires every field', () => {
    const all = Object.entries(schemas).flatMap(([name, schema]) => objectSchemas(schema, name));
    // The error-message refinements (allOf) only add a constant to the closed ErrorMessage.
    const closed = all.filter(({ at }) => !at.includes('allOf'));
    expect(closed.length).toBeGreaterThanOrEqual(11);
    for (const { schema, at } of closed) {
      expect(schema.additionalProperties, at).toBe(false);
      expect([...(schema.required ?? [])].sort(), at).toEqual(Object.keys(schema.properties ?? {}).sort());
    }
  });

  it('has the exact field sets of the spec', () => {
    const fields = (name: string) => Object.keys(schemas[name]?.properties ?? {});
    expect(fields('Order')).toEqual([
      'id',
      'ulid',
      'order_number',
      'fulfillment_status',
      'payment_status',
      'subtotal',
      'conversion_fees',
      'total',
      'currency',
      'items',
      'created_at',
      'updated_at',
    ]);
    expect(fields('Product')).toContain('isPermanentOutOfStock');
    expect(fields('Product')).toHaveLength(18);
    expect(fields('ProductMoney')).toEqual([
      'amount',
      'currency',
      'formatted',
      'decimal',
      'localized_decimal',
    ]);
    expect(fields('ProductPage')).toEqual(['data', 'links', 'meta']);
    expect(fields('PageLinks')).toEqual(['first', 'last', 'prev', 'next']);
    expect(fields('PageMeta')).toEqual(['current_page', 'from', 'last_page', 'per_page', 'to', 'total']);
    expect(fields('ValidationError')).toEqual(['message', 'errors']);
  });

  it('allows null exactly where the contract does', () => {
    expect(property('Product', 'notes')?.type).toEqual(['string', 'null']);
    expect(property('PageLinks', 'prev')?.type).toEqual(['string', 'null']);
    expect(property('PageLinks', 'next')?.type).toEqual(['string', 'null']);
    expect(property('PageMeta', 'from')?.type).toEqual(['integer', 'null']);
    expect(property('PageMeta', 'to')?.type).toEqual(['integer', 'null']);
    const nullable = Object.entries(schemas).flatMap(([name, schema]) =>
      Object.entries(schema.properties ?? {})
        .filter(([, field]) => Array.isArray(field.type) && field.type.includes('null'))
        .map(([field]) => `${name}.${field}`),
    );
    expect(nullable.sort()).toEqual([
      'PageLinks.next',
      'PageLinks.prev',
      'PageMeta.from',
      'PageMeta.to',
      'Product.notes',
    ]);
  });

  it('documents the parameters with their limits and defaults', () => {
    const [order] = parameters('/api/v1/orders/{order}');
    expect(order).toMatchObject({ name: 'order', in: 'path', required: true, schema: { type: 'string' } });
    expect(order?.schema.pattern).toBeUndefined();

    const list = Object.fromEntries(parameters('/api/v1/products').map((p) => [p.name, p]));
    // The server answers 422 above the 32-bit maximum, so the generated document says so.
    expect(list.page?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 2147483647, default: 1 });
    expect(list.per_page?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 15 });
    expect(list.search?.schema).toEqual({ type: 'string', maxLength: 200 });
    expect(list.category?.schema).toEqual({ type: 'string', maxLength: 200 });

    const search = Object.fromEntries(parameters('/api/v1/products/search').map((p) => [p.name, p]));
    expect(search.term).toMatchObject({ required: true, schema: { type: 'string', maxLength: 200 } });
    expect(Object.keys(search).sort()).toEqual(['page', 'per_page', 'term']);
  });

  it('secures only the order endpoint, with a bearer JWT', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(document.paths['/api/v1/orders/{order}']?.get?.security).toEqual([{ bearerAuth: [] }]);
    expect(document.paths['/api/v1/products']?.get?.security).toBeUndefined();
    expect(document.paths['/api/v1/products/search']?.get?.security).toBeUndefined();
    expect(document).not.toHaveProperty('security');
  });

  it('documents the statuses of each operation', () => {
    const statuses = (path: string) => Object.keys(document.paths[path]?.get?.responses ?? {}).sort();
    expect(statuses('/api/v1/orders/{order}')).toEqual(['200', '401', '403', '404', '500', '503']);
    expect(statuses('/api/v1/products')).toEqual(['200', '422', '500', '503']);
    expect(statuses('/api/v1/products/search')).toEqual(['200', '422', '500', '503']);
    expect(document.components.responses.Unauthenticated?.headers).toHaveProperty('WWW-Authenticate');
    expect(document.components.responses.ServiceUnavailable?.headers).toHaveProperty('Retry-After');
  });

  it('writes servers only when a server URL is configured', () => {
    expect(document).not.toHaveProperty('servers');
    expect(createOpenApiDocument({ serverUrl: 'https://shop.example.com/' }).servers).toEqual([
      { url: 'https://shop.example.com' },
    ]);
  });

  it('gives every caller its own copy', () => {
    const mine = createOpenApiDocument({});
    delete mine.components.schemas.Order;
    expect(createOpenApiDocument({}).components.schemas).toHaveProperty('Order');
  });
});
