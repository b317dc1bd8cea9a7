import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';

/** Where the development signing secret lives when no JWT settings are given. */
export function devSecretPath(config: Config): string {
  return path.join(config.dataDir, 'jwt-secret');
}

/**
 * The HS256 secret to sign and verify with: JWT_SECRET when set, else (outside production) one
 * generated once and kept in the data folder, so `npm run token` works against `npm start`.
 */
export async function resolveJwtSecret(config: Config): Promise<string | undefined> {
  if (config.jwt.secret || config.jwt.jwksUrl) return config.jwt.secret;
  if (config.env === 'production') throw new Error('JWT settings are required in production');
  const file = devSecretPath(config);
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    if (stored.length >= 32) return stored;
  } catch {
    // not created yet
  }
  await mkdir(path.dirname(file), { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  try {
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch {
    // another process created it first: use theirs
    return (await readFile(file, 'utf8')).trim();
  }
}
