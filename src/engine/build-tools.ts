import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeWebStream } from 'node:stream/web';
import { promisify } from 'node:util';
import { ENGINE_HOME, POSTGRES_BIN_DIR, POSTGRES_MAJOR, type SourcePin } from './pins';

/** What every build step uses: its folders, the step shape, a logged shell, the pinned sources. */

export const run = promisify(execFile);

export const LOG_DIR = path.join(ENGINE_HOME, 'logs');
export const SOURCE_ROOT = path.join(ENGINE_HOME, 'src');
export const LIBBSON_PREFIX = path.join(ENGINE_HOME, 'libbson');
export const PKG_CONFIG_DIR = path.join(ENGINE_HOME, 'pkgconfig');
export const PG_CONFIG = path.join(POSTGRES_BIN_DIR, 'pg_config');
export const EXTENSION_DIR = `/usr/share/postgresql/${POSTGRES_MAJOR}/extension`;

export class EngineBuildError extends Error {
  override name = 'EngineBuildError';
}

export type Log = (line: string) => void;

export interface BuildStep {
  name: string;
  /** What the step's result depends on; a change rebuilds it. */
  pin: string;
  needsRoot: boolean;
  /** Besides the stamp: is the result still there? */
  present: () => boolean | Promise<boolean>;
  build: (context: BuildContext) => Promise<void>;
}

export interface BuildContext {
  sourcesDir: string | undefined;
  log: Log;
}

/** Runs a build command with its output in a per-step log; on failure the log's tail is the error. */
export async function sh(
  step: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  await mkdir(LOG_DIR, { recursive: true });
  const logFile = path.join(LOG_DIR, `${step}.log`);
  const out = createWriteStream(logFile, { flags: 'a' });
  await new Promise<void>((resolve) => out.once('open', () => resolve()));
  out.write(`$ ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', out, out],
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  await new Promise<void>((resolve) => out.end(resolve));
  if (code !== 0) {
    const tail = (await readFile(logFile, 'utf8')).trim().split('\n').slice(-15).join('\n');
    throw new EngineBuildError(`${step}: \`${command} ${args.join(' ')}\` failed (${logFile}):\n${tail}`);
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** The pinned source, unpacked into a fresh folder: from the local archive folder, else from GitHub. */
export async function unpackSource(pin: SourcePin, { sourcesDir, log }: BuildContext): Promise<string> {
  const target = path.join(SOURCE_ROOT, pin.name);
  await rm(target, { recursive: true, force: true });
  await mkdir(target, { recursive: true });
  if (sourcesDir) {
    const archive = path.join(sourcesDir, pin.archive);
    const sums = await readFile(path.join(sourcesDir, 'SHA256SUMS'), 'utf8');
    const listed = sums.split('\n').find((line) => line.trim().endsWith(` ${pin.archive}`));
    const actual = await sha256Of(archive);
    if (listed?.split(/\s+/)[0] !== pin.sha256 || actual !== pin.sha256) {
      throw new EngineBuildError(`${archive}: SHA-256 ${actual} is not the pinned ${pin.sha256}`);
    }
    await run('tar', ['-xzf', archive, '-C', target]);
    return target;
  }
  const url = `https://codeload.github.com/${pin.repository}/tar.gz/${pin.commit}`;
  log(`    downloading ${url}`);
  const response = await fetch(url, { signal: AbortSignal.timeout(5 * 60_000) });
  if (!response.ok || !response.body) throw new EngineBuildError(`${url}: HTTP ${response.status}`);
  const archive = path.join(SOURCE_ROOT, `${pin.name}.tar.gz`);
  await pipeline(Readable.fromWeb(response.body as NodeWebStream), createWriteStream(archive));
  await run('tar', ['-xzf', archive, '-C', target, '--strip-components=1']);
  await rm(archive);
  return target;
}

export function buildEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${POSTGRES_BIN_DIR}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    PKG_CONFIG_PATH: [
      path.join(LIBBSON_PREFIX, 'lib', 'pkgconfig'),
      path.join(LIBBSON_PREFIX, 'lib', 'x86_64-linux-gnu', 'pkgconfig'),
      PKG_CONFIG_DIR,
    ].join(':'),
  };
}
