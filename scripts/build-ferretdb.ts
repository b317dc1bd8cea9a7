import { ensureFerretdbBinary, ferretdbBinaryPath } from '../src/db/ferretdb-build';

/** Builds the embedded database ahead of time (CI does this before the tests). Idempotent. */
const started = Date.now();
try {
  const binary = await ensureFerretdbBinary((line) => console.log(line));
  console.log(`FerretDB ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${binary}`);
} catch (error) {
  console.error((error as Error).message);
  console.error(`(expected binary: ${ferretdbBinaryPath()})`);
  process.exit(1);
}
