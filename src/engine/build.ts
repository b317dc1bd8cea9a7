import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BUILD_STEPS } from './build-steps';
import { EngineBuildError, LOG_DIR, type BuildStep, type Log } from './build-tools';
import { DEFAULT_SOURCES_DIR, ENGINE_HOME } from './pins';

/**
 * Builds the embedded database once: Debian's PostgreSQL 15 and toolchain (apt), libbson 1.28
 * static into a private prefix, pg_cron 1.6.3, pgvector 0.8.0, FerretDB's DocumentDB fork
 * (installed into PostgreSQL's system directories, hence root once), and FerretDB v2.5.0 from the
 * Go module proxy. A stamp of what was built, with its pins, makes the next run a no-op.
 */

const STAMP_FILE = path.join(ENGINE_HOME, 'build.json');

export const NEEDS_ROOT_MESSAGE =
  'The embedded database (PostgreSQL 15 + DocumentDB + FerretDB) needs a one-time build as root on Debian/Ubuntu with Go: run `sudo npm run db:build`; on other systems set MONGODB_URI to a MongoDB (or one of FerretDB’s own images).';

interface Stamp {
  steps: Record<string, string>;
}

async function readStamp(): Promise<Stamp> {
  try {
    return JSON.parse(await readFile(STAMP_FILE, 'utf8')) as Stamp;
  } catch {
    return { steps: {} };
  }
}

async function writeStamp(stamp: Stamp): Promise<void> {
  await mkdir(ENGINE_HOME, { recursive: true });
  await writeFile(`${STAMP_FILE}.partial`, `${JSON.stringify(stamp, null, 2)}\n`);
  await rename(`${STAMP_FILE}.partial`, STAMP_FILE);
}
function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** True when every step is stamped with its current pin and its result is still in place. */
async function pendingSteps(): Promise<BuildStep[]> {
  const stamp = await readStamp();
  const pending: BuildStep[] = [];
  for (const step of BUILD_STEPS) {
    if (step.name === 'os-user' && !isRoot() && stamp.steps[step.name] === undefined) continue;
    if (stamp.steps[step.name] === step.pin && (await step.present())) continue;
    pending.push(step);
  }
  return pending;
}

export interface BuildOptions {
  /** Folder with the pinned archives and their SHA256SUMS; default ../shared/vendor/documentdb when present, else download. */
  sourcesDir?: string;
  log?: Log;
}

/**
 * Builds whatever is missing or out of date; a no-op when the stamp is current. Without root,
 * when a step needs root, it throws NEEDS_ROOT_MESSAGE.
 */
export async function ensureEmbeddedEngine({
  sourcesDir,
  log = (line) => console.error(line),
}: BuildOptions = {}): Promise<'built' | 'current'> {
  const pending = await pendingSteps();
  if (pending.length === 0) return 'current';
  if (!isRoot() && pending.some((step) => step.needsRoot)) throw new EngineBuildError(NEEDS_ROOT_MESSAGE);
  const localSources =
    sourcesDir ??
    (existsSync(path.join(DEFAULT_SOURCES_DIR, 'SHA256SUMS')) ? DEFAULT_SOURCES_DIR : undefined);
  log(
    `Building the embedded database (${pending.map((step) => step.name).join(', ')}) from ${localSources ?? 'GitHub'}; logs in ${LOG_DIR}`,
  );
  const started = Date.now();
  const stamp = await readStamp();
  for (const [index, step] of pending.entries()) {
    const stepStarted = Date.now();
    log(`  ${index + 1}/${pending.length} ${step.name}…`);
    await step.build({ sourcesDir: localSources, log });
    stamp.steps[step.name] = step.pin;
    await writeStamp(stamp);
    log(`  ${index + 1}/${pending.length} ${step.name} done in ${seconds(Date.now() - stepStarted)}`);
  }
  log(`Embedded database built in ${seconds(Date.now() - started)}.`);
  return 'built';
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
