import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';

/** Bytes a signing secret needs at least (HS256's key size): a shorter one is guessable offline. */
const MIN_SECRET_BYTES = 32;

/** Where the development signing secret lives when no JWT settings are given. */
export function devSecretPath(config: Config): string {
  return path.join(config.dataDir, 'jwt-secret');
}

/** A development secret the server cannot use or keep; start-up stops with its one line. */
export class DevSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DevSecretError';
  }
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

/**
 * The HS256 secret to sign and verify with: JWT_SECRET when set, else (outside production) one
 * generated once and kept in the data folder, so `npm run token` works against `npm start`.
 * A file too short to be a secret is refused, never used; an empty one (a start that died while
 * writing it, before writes were atomic) is replaced.
 */
export async function resolveJwtSecret(config: Config): Promise<string | undefined> {
  if (config.jwt.secret || config.jwt.jwksUrl) return config.jwt.secret;
  if (config.env === 'production') throw new Error('JWT settings are required in production');
  const file = devSecretPath(config);
  const stored = await readSecret(file);
  if (stored !== undefined && stored !== '') return checked(stored, file);
  return createSecret(file, { replaceEmpty: stored === '' });
}

/** The file's secret; undefined when there is no file. */
async function readSecret(file: string): Promise<string | undefined> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined;
    throw new DevSecretError(
      `Cannot read the development JWT secret ${file} (${codeOf(error)}): fix its permissions, or set JWT_SECRET.`,
    );
  }
}

function checked(secret: string, file: string): string {
  const bytes = Buffer.byteLength(secret);
  if (bytes >= MIN_SECRET_BYTES) return secret;
  throw new DevSecretError(
    `The development JWT secret ${file} holds ${bytes} bytes; a signing secret needs at least ${MIN_SECRET_BYTES}: delete the file to have one generated, or set JWT_SECRET.`,
  );
}

/**
 * Written whole to a temporary file, then linked into place: no reader (another process starting
 * at the same time) ever sees a partial file, and the first process to finish wins.
 */
async function createSecret(file: string, { replaceEmpty }: { replaceEmpty: boolean }): Promise<string> {
  const secret = randomBytes(48).toString('base64url');
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const cannotWrite = (error: unknown) =>
    new DevSecretError(
      `Cannot write the development JWT secret to ${file} (${codeOf(error)}): make DATA_DIR (${path.dirname(file)}) writable, or set JWT_SECRET.`,
    );
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(`${secret}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw cannotWrite(error);
  }
  try {
    if (replaceEmpty) await rename(temporary, file);
    else await link(temporary, file);
    return secret;
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw cannotWrite(error);
    // Another process created it first: use theirs.
    const theirs = await readSecret(file);
    if (!theirs) throw cannotWrite(error);
    return checked(theirs, file);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}
