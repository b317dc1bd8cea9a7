import { execFile } from 'node:child_process';
import { cp, chmod, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * Builds the embedded FerretDB from its Go module source into a project-local folder, once.
 *
 * Why not plain `go install …@v1.24.2`: the module proxy here refuses the module's version list
 * (which `go install pkg@version` reads for its deprecation check), and a binary built that way
 * panics at start because the module zip lacks the generated build/version/version.txt.
 * So we download the exact module (checksum-verified by `go mod download`), copy it, stamp the
 * version file, and build it with the module's own go.sum.
 */

const run = promisify(execFile);

export const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
export const FERRETDB_VERSION = 'v1.24.2';

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');
const FERRETDB_HOME = path.join(PROJECT_ROOT, '.ferretdb');

export function ferretdbBinaryPath(version = FERRETDB_VERSION): string {
  return path.join(FERRETDB_HOME, 'bin', `ferretdb-${version}`);
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function goIsInstalled(): Promise<boolean> {
  try {
    await run('go', ['version'], { timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' };
}

interface ModuleDownload {
  Dir: string;
  Origin?: { Hash?: string };
}

type Step = (line: string) => void;

async function buildFromModuleSource(version: string, output: string, step: Step): Promise<void> {
  step(
    `1/3 downloading the FerretDB ${version} module and its dependencies (go mod download, ~1 GB on a cold Go cache)`,
  );
  const { stdout } = await run('go', ['mod', 'download', '-json', `${FERRETDB_MODULE}@${version}`], {
    env: goEnv(),
    timeout: 10 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const download = JSON.parse(stdout) as ModuleDownload;
  step('2/3 copying the module source and stamping its version');
  const source = path.join(FERRETDB_HOME, 'src', `FerretDB@${version}`);
  await rm(source, { recursive: true, force: true });
  await cp(download.Dir, source, { recursive: true });
  await run('chmod', ['-R', 'u+w', source]);
  await writeFile(path.join(source, 'build', 'version', 'version.txt'), `${version}\n`);
  if (download.Origin?.Hash) {
    await writeFile(path.join(source, 'build', 'version', 'commit.txt'), `${download.Origin.Hash}\n`);
  }
  step('3/3 compiling (go build)');
  await run('go', ['build', '-trimpath', '-o', output, './cmd/ferretdb'], {
    cwd: source,
    env: goEnv(),
    timeout: 30 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

export class FerretdbBuildError extends Error {}

/** Returns the binary path, building it first when missing. Safe to call concurrently. */
export async function ensureFerretdbBinary(
  log: (line: string) => void = (line) => console.error(line),
): Promise<string> {
  const binary = ferretdbBinaryPath();
  if (await exists(binary)) return binary;

  if (!(await goIsInstalled())) {
    throw new FerretdbBuildError(
      'The embedded database needs Go to build FerretDB once, and `go` was not found. ' +
        'Install Go (https://go.dev/dl/) or set MONGODB_URI to use a MongoDB server you run.',
    );
  }
  log(
    `Building the embedded database (FerretDB ${FERRETDB_VERSION}) with Go: a one-time build of 1-3 minutes…`,
  );
  const started = Date.now();
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
  const step: Step = (line) => log(`  [${seconds()}] ${line}`);
  await mkdir(path.dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  const versions = [FERRETDB_VERSION, 'v1.24.0', 'v1.23.1'];
  const failures: string[] = [];
  for (const version of versions) {
    try {
      await buildFromModuleSource(version, partial, step);
      await chmod(partial, 0o755);
      await rename(partial, binary);
      log(`Built FerretDB ${version} in ${seconds()}: ${binary}`);
      return binary;
    } catch (error) {
      const detail = (error as { stderr?: string }).stderr || (error as Error).message;
      failures.push(`${version}: ${detail.trim().split('\n').slice(-3).join(' | ')}`);
      log(`  [${seconds()}] FerretDB ${version} did not build; trying the next version.`);
    }
  }
  await rm(partial, { force: true });
  throw new FerretdbBuildError(
    `Could not build the embedded database. Set MONGODB_URI to use your own MongoDB.\n${failures.join('\n')}`,
  );
}
