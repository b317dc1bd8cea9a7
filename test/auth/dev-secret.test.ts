import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveJwtSecret } from '../../src/auth/dev-secret';
import { loadConfig } from '../../src/config';
import { startFailureHint } from '../../src/start-failure';

/**
 * The development signing secret in DATA_DIR: a 3-character file was used as the key (tokens signed
 * with `abc` accepted), a start on a full disk left a 0-byte file that broke every later start, and a
 * read-only DATA_DIR was reported as ENOENT.
 */
const root = mkdtempSync(path.join(tmpdir(), 'dev-secret-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

let folders = 0;
function configIn(dataDir = path.join(root, `data-${folders++}`)) {
  // A real MONGODB_URI, so a failure is not mistaken for the embedded database's.
  return loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir, MONGODB_URI: 'mongodb://127.0.0.1:1/x' });
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as Error,
  );
}

describe('the development JWT secret', () => {
  it('is generated once (48 random bytes), kept, and written with no temporary file left', async () => {
    const config = configIn();
    const first = await resolveJwtSecret(config);
    expect(first).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(await resolveJwtSecret(config)).toBe(first);
    expect(readdirSync(config.dataDir)).toEqual(['jwt-secret']);
  });

  it('is the same for processes starting together', async () => {
    const config = configIn();
    const secrets = await Promise.all(Array.from({ length: 8 }, () => resolveJwtSecret(config)));
    expect(new Set(secrets).size).toBe(1);
    expect(readFileSync(path.join(config.dataDir, 'jwt-secret'), 'utf8').trim()).toBe(secrets[0]);
  });

  it('refuses a file shorter than 32 bytes with one clear line', async () => {
    const config = configIn();
    await resolveJwtSecret(config);
    writeFileSync(path.join(config.dataDir, 'jwt-secret'), 'abc\n');
    const error = await failure(resolveJwtSecret(config));
    expect(startFailureHint(error, config)).toMatch(
      /jwt-secret holds 3 bytes; a signing secret needs at least 32: delete the file .*or set JWT_SECRET/,
    );
  });

  it('replaces an empty file (left by a start that died while writing it)', async () => {
    const config = configIn();
    await resolveJwtSecret(config);
    writeFileSync(path.join(config.dataDir, 'jwt-secret'), '');
    const secret = await resolveJwtSecret(config);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(readFileSync(path.join(config.dataDir, 'jwt-secret'), 'utf8').trim()).toBe(secret);
  });

  it('names the real error when DATA_DIR cannot be written (never ENOENT)', async () => {
    // A folder nobody may create files in, root included (and read-only in most containers).
    const config = configIn('/sys/kernel');
    const error = await failure(resolveJwtSecret(config));
    const hint = startFailureHint(error, config);
    expect(hint).toMatch(
      /^Cannot write the development JWT secret to \/sys\/kernel\/jwt-secret \((EACCES|EROFS|EPERM)\): make DATA_DIR/,
    );
    expect(hint).not.toMatch(/ENOENT|listen|embedded database/);
  });

  it('names the real error when DATA_DIR is not a folder', async () => {
    const notAFolder = path.join(root, 'a-file');
    writeFileSync(notAFolder, '');
    const config = configIn(path.join(notAFolder, 'data'));
    const hint = startFailureHint(await failure(resolveJwtSecret(config)), config);
    expect(hint).toMatch(/^Cannot (read|write) the development JWT secret .*jwt-secret \(ENOTDIR\)/);
  });
});
