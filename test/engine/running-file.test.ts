import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findRunningDatabase, publishRunningDatabase, RUNNING_FILE } from '../../src/engine';

/** The address a running server publishes in its data folder, and what the tools make of a stale one. */

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'storefront-running-'));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

const file = () => path.join(dataDir, RUNNING_FILE);

describe('running.json', () => {
  it('is found while its owner runs, and gone once the owner withdraws it', async () => {
    const withdraw = await publishRunningDatabase(dataDir, {
      uri: 'mongodb://127.0.0.1:39999/',
      owner: 'npm start',
    });
    expect(await findRunningDatabase(dataDir)).toMatchObject({
      uri: 'mongodb://127.0.0.1:39999/',
      pid: process.pid,
      owner: 'npm start',
    });
    await withdraw();
    await expect(readFile(file())).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await findRunningDatabase(dataDir)).toBeUndefined();
  });

  it('left by a process that is gone is ignored', async () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(
      file(),
      JSON.stringify({ uri: 'mongodb://127.0.0.1:39999/', pid: gone, owner: 'npm start' }),
    );
    expect(await findRunningDatabase(dataDir)).toBeUndefined();
  });

  it('naming a live PID that another process has since taken is ignored', async () => {
    await writeFile(
      file(),
      JSON.stringify({
        uri: 'mongodb://127.0.0.1:39999/',
        pid: process.pid,
        owner: 'npm start',
        startTicks: '1',
      }),
    );
    expect(await findRunningDatabase(dataDir)).toBeUndefined();
  });

  it('that is not ours to read (half written, not JSON, no URI) is ignored', async () => {
    for (const text of [
      '{"uri":"mongodb://127.0.0.1:1/","pi',
      'running',
      JSON.stringify({ pid: process.pid }),
    ]) {
      await writeFile(file(), text);
      expect(await findRunningDatabase(dataDir)).toBeUndefined();
    }
  });

  it('is not removed by an owner that another has replaced', async () => {
    const withdraw = await publishRunningDatabase(dataDir, {
      uri: 'mongodb://127.0.0.1:39999/',
      owner: 'npm start',
    });
    const other = JSON.stringify({ uri: 'mongodb://127.0.0.1:40000/', pid: 1, owner: 'npm run db' });
    await writeFile(file(), other);
    await withdraw();
    expect(await readFile(file(), 'utf8')).toBe(other);
  });
});
