import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { buildSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedSchema } from '../../src/schema/sdl';
import { startTestServer, type TestServer } from '../support/server';
import { dataOf } from './helpers';

/** The committed schema.graphql is the reviewable contract: it must be exactly what the code builds. */

const SCHEMA_FILE = path.resolve(import.meta.dirname, '..', '..', 'schema.graphql');

describe('schema.graphql', () => {
  it('matches the schema the code builds (run `npm run schema` after changing it)', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    const built = printedSchema();
    if (committed !== built) {
      // A readable failure: the first differing line, then the full diff from expect below.
      const committedLines = committed.split('\n');
      const builtLines = built.split('\n');
      const line = builtLines.findIndex((text, index) => text !== committedLines[index]);
      expect.fail(
        `schema.graphql is out of date with src/schema (first difference at line ${line + 1}: ` +
          `committed ${JSON.stringify(committedLines[line])}, built ${JSON.stringify(builtLines[line])}). ` +
          'Run `npm run schema` and commit schema.graphql.',
      );
    }
    expect(committed).toBe(built);
  });

  it('is valid SDL and already sorted', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    const schema = buildSchema(committed);
    expect(`${printSchema(lexicographicSortSchema(schema))}\n`).toBe(committed);
  });
});

describe('the served schema', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ fixtures: false });
  });
  afterAll(() => server.stop());

  it('has the committed root fields, arguments and types, as introspection over HTTP shows them', async () => {
    // Shallow on purpose: the server's depth limit applies to introspection too.
    const reply = await server.graphql(`{
      __schema {
        queryType { fields { name args { name } } }
        types { name kind }
      }
    }`);
    const served = dataOf<{
      __schema: {
        queryType: { fields: { name: string; args: { name: string }[] }[] };
        types: { name: string; kind: string }[];
      };
    }>(reply).__schema;
    const committed = buildSchema(await readFile(SCHEMA_FILE, 'utf8'));
    const queryFields = Object.values(committed.getQueryType()!.getFields());
    expect(
      served.queryType.fields.map((field) => [field.name, field.args.map((arg) => arg.name).sort()]).sort(),
    ).toEqual(queryFields.map((field) => [field.name, field.args.map((arg) => arg.name).sort()]).sort());
    const ownTypes = (types: string[]) => types.filter((name) => !name.startsWith('__')).sort();
    expect(ownTypes(served.types.map((type) => type.name))).toEqual(
      ownTypes(Object.keys(committed.getTypeMap())),
    );
  });
});
