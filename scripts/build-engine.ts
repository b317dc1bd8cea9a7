import path from 'node:path';
import { EngineBuildError, ensureEmbeddedEngine } from '../src/engine';
import { readCommandLine } from './command-line';

const usage = `Usage: npm run db:build [-- --sources DIR]

Builds the embedded database once (as root: apt packages, PostgreSQL extensions, FerretDB).
  --sources DIR  the pinned source archives and their SHA256SUMS
                 (default: ../shared/vendor/documentdb when present, else download from GitHub)`;

const { values } = readCommandLine(usage, { sources: { type: 'string' } });
const started = Date.now();
try {
  const result = await ensureEmbeddedEngine({
    sourcesDir: values.sources === undefined ? undefined : path.resolve(values.sources),
    log: (line) => console.log(line),
  });
  const elapsed = `${((Date.now() - started) / 1000).toFixed(1)} s`;
  console.log(result === 'current' ? `Embedded database is up to date (${elapsed}).` : `Done in ${elapsed}.`);
} catch (error) {
  if (!(error instanceof EngineBuildError)) throw error;
  console.error(error.message);
  process.exit(1);
}
