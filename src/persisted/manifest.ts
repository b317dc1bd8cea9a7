import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kind, parse } from 'graphql';

/** Trusted documents: sha256 (hex, of the document's exact text) → document. */
export type Manifest = ReadonlyMap<string, string>;

const HASH = /^[0-9a-f]{64}$/;

/** A manifest the server cannot trust; start-up stops with its message. */
export class ManifestError extends Error {
  constructor(message: string) {
    super(`PERSISTED_OPERATIONS_MANIFEST: ${message}`);
    this.name = 'ManifestError';
  }
}

/** The hash clients send (Apollo's `extensions.persistedQuery.sha256Hash`). */
export function documentHash(document: string): string {
  return createHash('sha256').update(document, 'utf8').digest('hex');
}

/** Documents keyed by their hash, as a manifest holds them. */
export function manifestOf(documents: Iterable<string>): Map<string, string> {
  return new Map([...documents].map((document) => [documentHash(document), document]));
}

/**
 * Reads a manifest of `npm run persist` (or any client's `persisted-documents.json` of the same
 * shape) and refuses one that is not an object of sha256 → the document with that hash.
 */
export function loadManifest(path: string): Manifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ManifestError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ManifestError(`${path} must hold a JSON object of sha256 hash → document`);
  }
  const manifest = new Map<string, string>();
  for (const [hash, document] of Object.entries(parsed)) {
    if (!HASH.test(hash) || typeof document !== 'string' || documentHash(document) !== hash) {
      throw new ManifestError(`entry "${hash.slice(0, 80)}" of ${path} is not the sha256 of its document`);
    }
    manifest.set(hash, document);
  }
  return manifest;
}

/** The operation names of trusted documents: the only operationName values metrics label by. */
export function operationNames(documents: Iterable<string>): Set<string> {
  const names = new Set<string>();
  for (const document of documents) {
    let definitions;
    try {
      ({ definitions } = parse(document));
    } catch {
      continue; // refused when it runs, like any document that does not parse
    }
    for (const definition of definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) names.add(definition.name.value);
    }
  }
  return names;
}
