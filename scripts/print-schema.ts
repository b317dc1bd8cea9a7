import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { printedSchema } from '../src/schema/sdl';

/** Rewrites schema.graphql, the committed SDL that makes every schema change a reviewable diff. */
const target = path.resolve(import.meta.dirname, '..', 'schema.graphql');
await writeFile(target, printedSchema());
console.log(`Wrote ${path.relative(process.cwd(), target)}`);
