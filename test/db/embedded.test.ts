import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase } from '../../src/db/embedded';
import { processesMentioning, waitUntil } from '../support/processes';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'storefront-embedded-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  for (const dir of dirs.splice(0)) {
    for (const pid of processesMentioning(dir)) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('embedded FerretDB', () => {
  it('starts on loopback with telemetry disabled, answers, and stops without leaving a process or port', async () => {
    const dataDir = await tempDir();
    const database = await startEmbeddedDatabase({ dataDir, log: () => undefined });
    expect(database.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
    expect(processesMentioning(dataDir).length).toBeGreaterThan(0);

    const client = new MongoClient(database.uri);
    expect(await client.db('admin').command({ ping: 1 })).toMatchObject({ ok: 1 });
    await client.close();

    await database.stop();
    expect(processesMentioning(dataDir)).toEqual([]);
    expect(await portIsFree(database.port)).toBe(true);
  });

  it('keeps data across restarts of the same folder', async () => {
    const dataDir = await tempDir();
    const first = await startEmbeddedDatabase({ dataDir, log: () => undefined });
    let client = new MongoClient(first.uri);
    await client.db('keep').collection('things').insertOne({ id: 1 });
    await client.close();
    await first.stop();

    const second = await startEmbeddedDatabase({ dataDir, log: () => undefined });
    client = new MongoClient(second.uri);
    expect(await client.db('keep').collection('things').countDocuments()).toBe(1);
    await client.close();
    await second.stop();
  });

  it('dies with its owner even when the owner is killed with SIGKILL', async () => {
    const dataDir = await tempDir();
    const script = `
      import { startEmbeddedDatabase } from ${JSON.stringify(path.resolve('src/db/embedded.ts'))};
      const db = await startEmbeddedDatabase({ dataDir: ${JSON.stringify(dataDir)}, log: () => {} });
      console.log('READY ' + db.port);
      setInterval(() => {}, 1000);
    `;
    // node itself (not the tsx CLI, which would be a parent process) is the owner we kill.
    const owner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      owner.stdout.on('data', (chunk: Buffer) => {
        const match = /READY (\d+)/.exec(chunk.toString());
        if (match) resolve(Number(match[1]));
      });
      owner.once('exit', () => reject(new Error('owner exited early')));
    });
    expect(processesMentioning(dataDir).length).toBeGreaterThan(0);

    owner.kill('SIGKILL');
    expect(await waitUntil(() => processesMentioning(dataDir).length === 0, 10_000)).toBe(true);
    expect(await portIsFree(port)).toBe(true);
  });
});
