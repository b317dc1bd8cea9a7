import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GraphQLError, Kind, parse, validate } from 'graphql';
import { APQ_LIMITS } from '../src/persisted/apq-store';
import { documentHash } from '../src/persisted/manifest';
import { schema } from '../src/schema/index';
import { readCommandLine, usageError } from './command-line';

/**
 * Builds the trusted-documents manifest (sha256 of each document's exact text → the document)
 * from a folder of .graphql files, refusing any document the schema does not validate.
 */

const usage = 'Usage: npm run persist -- <folder of .graphql files> [--out persisted-operations.json]';
const MAX_FILES = 10_000;
// The size the server registers at most; the manifest is held to the same bound.
const MAX_FILE_BYTES = APQ_LIMITS.maxDocumentBytes;

const { values, positionals } = readCommandLine(
  usage,
  { out: { type: 'string', default: 'persisted-operations.json' } },
  true,
);
if (positionals.length !== 1) usageError('Give exactly one folder.', usage);
const folder = path.resolve(positionals[0]!);
if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory())
  usageError(`${folder} is not a folder.`, usage);

const files = (readdirSync(folder, { recursive: true, encoding: 'utf8' }) as string[])
  .filter((name) => name.endsWith('.graphql') || name.endsWith('.gql'))
  .sort();
if (files.length === 0) {
  console.error(`No .graphql files in ${folder}.`);
  process.exit(1);
}
if (files.length > MAX_FILES) {
  console.error(`${files.length} files in ${folder}: at most ${MAX_FILES}.`);
  process.exit(1);
}

const problems: string[] = [];
const manifest: Record<string, string> = {};
const where = (file: string, error: GraphQLError) =>
  error.locations?.[0] ? `${file}:${error.locations[0].line}:${error.locations[0].column}` : file;

for (const file of files) {
  const text = readFileSync(path.join(folder, file), 'utf8');
  if (Buffer.byteLength(text) > MAX_FILE_BYTES) {
    problems.push(`${file}: larger than ${MAX_FILE_BYTES} bytes (the server would not keep it)`);
    continue;
  }
  let document;
  try {
    document = parse(text);
  } catch (error) {
    problems.push(`${where(file, error as GraphQLError)}: ${(error as GraphQLError).message}`);
    continue;
  }
  if (!document.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION)) {
    problems.push(`${file}: holds no operation`);
    continue;
  }
  const errors = validate(schema, document);
  for (const error of errors) problems.push(`${where(file, error)}: ${error.message}`);
  if (errors.length === 0) manifest[documentHash(text)] = text;
}

if (problems.length > 0) {
  console.error(`Refused (no manifest written):\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
  process.exit(1);
}
const out = path.resolve(values.out!);
writeFileSync(out, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`Wrote ${Object.keys(manifest).length} trusted documents to ${out}`);
