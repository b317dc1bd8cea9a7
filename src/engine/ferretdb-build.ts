import { chmod, cp, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EngineBuildError, run, sh, SOURCE_ROOT, type BuildContext } from './build-tools';
import { FERRETDB_MODULE, FERRETDB_VERSION, ferretdbBinaryPath } from './pins';

function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' };
}

interface ModuleDownload {
  Dir: string;
  Origin?: { Hash?: string };
}

/**
 * Not `go install …@v2.5.0`: the module proxy here refuses the module's version list (which `go
 * install` reads), and the module zip lacks the generated build/version/version.txt the binary
 * needs. So: download the exact module (checksum-verified), copy it, stamp the version, build it
 * with its own go.sum.
 */
export async function buildFerretdb({ log }: BuildContext): Promise<void> {
  try {
    await run('go', ['version'], { timeout: 30_000 });
  } catch {
    throw new EngineBuildError(
      'FerretDB is built with Go, and `go` was not found: install Go ≥ 1.24 (https://go.dev/dl/).',
    );
  }
  const { stdout } = await run('go', ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`], {
    env: goEnv(),
    timeout: 10 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const download = JSON.parse(stdout) as ModuleDownload;
  const source = path.join(SOURCE_ROOT, `FerretDB@${FERRETDB_VERSION}`);
  await rm(source, { recursive: true, force: true });
  await cp(download.Dir, source, { recursive: true });
  await run('chmod', ['-R', 'u+w', source]);
  const versionDir = path.join(source, 'build', 'version');
  await writeFile(path.join(versionDir, 'version.txt'), `${FERRETDB_VERSION}\n`);
  if (download.Origin?.Hash)
    await writeFile(path.join(versionDir, 'commit.txt'), `${download.Origin.Hash}\n`);
  // gomaxprocs.go is `//go:build !go1.25` (Go 1.25 sets GOMAXPROCS from the container's quota by
  // itself), yet main.go calls it unconditionally: newer Go needs the no-op.
  await writeFile(
    path.join(source, 'cmd', 'ferretdb', 'gomaxprocs_go125.go'),
    '//go:build go1.25\n\npackage main\n\nimport "log/slog"\n\nfunc setGOMAXPROCS(*slog.Logger) {}\n',
  );
  log('    go build (the first build downloads ~80 MB of Go modules)');
  const binary = ferretdbBinaryPath();
  await mkdir(path.dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  await sh('ferretdb', 'go', ['build', '-trimpath', '-o', partial, './cmd/ferretdb'], {
    cwd: source,
    env: goEnv(),
  });
  await chmod(partial, 0o755);
  await rename(partial, binary);
}
