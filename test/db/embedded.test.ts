import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLUSTER_OS_USER,
  startEmbeddedDatabase,
  superviseEmbeddedDatabase,
  type EmbeddedDatabase,
} from '../../src/engine';
import { freeLoopbackPort } from '../../src/engine/guarded-child';
import { processesMentioning, waitUntil } from '../support/processes';

const run = promisify(execFile);

const dirs: string[] = [];
const started: EmbeddedDatabase[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sf-embedded-'));
  dirs.push(dir);
  return dir;
}
async function start(dataDir: string): Promise<EmbeddedDatabase> {
  const database = await startEmbeddedDatabase({ dataDir, throwaway: true, log: () => undefined });
  started.push(database);
  return database;
}
afterEach(async () => {
  for (const database of started.splice(0)) await database.stop();
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

/** The database's processes by role: `ps` lines that mention the data folder (the cluster's name is that folder). */
function processes(dataDir: string): { postmaster: number[]; backends: number[]; ferretdb: number[] } {
  const lines = execFileSync('ps', ['-eo', 'pid=,user=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.slice(2).join(' ').includes(dataDir));
  const pids = (match: (command: string, args: string) => boolean) =>
    lines.filter(([, , command = '', ...args]) => match(command, args.join(' '))).map(([pid]) => Number(pid));
  return {
    postmaster: pids((command) => command.endsWith('/postgres')),
    backends: pids((command) => command === 'postgres:'),
    ferretdb: pids((command) => /ferretdb-v/.test(command)),
  };
}

async function answers(uri: string): Promise<boolean> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1_000 });
  try {
    return (await client.db('probe').collection('things').countDocuments()) >= 0;
  } catch {
    return false;
  } finally {
    await client.close();
  }
}

/**
 * Milliseconds until the database answers three reads in a row, from the first of them (-1: not
 * within `timeoutMs`). One answer is not enough after a kill: the survivor of the pair can answer
 * once more before the supervisor has restarted both, and a read a moment later then fails.
 */
async function untilAnswers(uri: string, timeoutMs: number): Promise<number> {
  const begun = Date.now();
  let firstOfRun: number | undefined;
  let run = 0;
  while (Date.now() - begun < timeoutMs) {
    if (await answers(uri)) {
      firstOfRun ??= Date.now() - begun;
      if (++run === 3) return firstOfRun;
    } else {
      firstOfRun = undefined;
      run = 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return -1;
}

describe('the embedded database (PostgreSQL + DocumentDB + FerretDB)', () => {
  it('serves on loopback only, PostgreSQL on a unix socket, both as an unprivileged user, and stops without leaving a process or port', async () => {
    const dataDir = await tempDir();
    const database = await start(dataDir);
    expect(database.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
    expect(await answers(database.uri)).toBe(true);

    const running = processes(dataDir);
    expect(running.postmaster).toHaveLength(1);
    expect(running.ferretdb).toHaveLength(1);
    expect(running.backends.length).toBeGreaterThan(0);
    // postmaster.pid line 6 is the TCP listen address: none.
    const pidFile = (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n');
    expect(pidFile[5]).toBe('');
    expect(pidFile[4]).toBe(path.join(dataDir, 'postgres'));
    if (process.getuid?.() === 0) {
      const { stdout } = await run('ps', [
        '-o',
        'user:32=',
        '-p',
        `${running.postmaster[0]},${running.ferretdb[0]}`,
      ]);
      expect(stdout.trim().split(/\s+/)).toEqual([CLUSTER_OS_USER, CLUSTER_OS_USER]);
    }

    await database.stop();
    expect(processesMentioning(dataDir)).toEqual([]);
    for (const pid of [...running.postmaster, ...running.backends, ...running.ferretdb]) {
      expect(() => process.kill(pid, 0)).toThrow();
    }
    expect(await portIsFree(database.port)).toBe(true);
  });

  it('keeps data across restarts of the same folder', async () => {
    const dataDir = await tempDir();
    const first = await start(dataDir);
    let client = new MongoClient(first.uri);
    await client.db('keep').collection('things').insertOne({ id: 1 });
    await client.close();
    await first.stop();

    const second = await start(dataDir);
    client = new MongoClient(second.uri);
    expect(await client.db('keep').collection('things').countDocuments()).toBe(1);
    await client.close();
  });

  it('is served again within 10 s after a kill -9 of FerretDB, then of PostgreSQL, on the same port and data', async () => {
    const dataDir = await tempDir();
    const database = superviseEmbeddedDatabase(await start(dataDir), { log: () => undefined });
    started.push(database);
    const client = new MongoClient(database.uri);
    await client.db('keep').collection('things').insertOne({ id: 1 });
    await client.close();

    for (const role of ['ferretdb', 'postmaster'] as const) {
      const [victim] = processes(dataDir)[role];
      process.kill(victim!, 'SIGKILL');
      const recoveredMs = await untilAnswers(database.uri, 15_000);
      console.log(`kill -9 of ${role}: served again after ${recoveredMs} ms`);
      expect(recoveredMs).toBeGreaterThanOrEqual(0);
      expect(recoveredMs).toBeLessThan(10_000);
      expect(processes(dataDir)[role]).not.toContain(victim);
    }
    const after = new MongoClient(database.uri);
    expect(await after.db('keep').collection('things').countDocuments()).toBe(1);
    await after.close();

    await database.stop();
    expect(processesMentioning(dataDir)).toEqual([]);
  }, 60_000);

  it('starts over a postmaster.pid left by a killed run, whose PID now belongs to another process', async () => {
    const dataDir = await tempDir();
    const first = await start(dataDir);
    await first.stop();
    // What a killed run leaves: the lock file, naming a PID that is alive but no PostgreSQL (ours).
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    const { uid, gid } = await stat(path.join(dataDir, 'postgres'));
    await writeFile(
      pidFile,
      `${process.pid}\n${path.join(dataDir, 'postgres')}\n1700000000\n5432\n\n\n0 0\nready\n`,
    );
    await run('chown', [`${uid}:${gid}`, pidFile]);

    const second = await start(dataDir);
    expect(await answers(second.uri)).toBe(true);
  });

  it('dies with its owner, backends included, even when the owner is killed with SIGKILL', async () => {
    const dataDir = await tempDir();
    const script = `
      import { startEmbeddedDatabase } from ${JSON.stringify(path.resolve('src/engine/index.ts'))};
      const db = await startEmbeddedDatabase({ dataDir: ${JSON.stringify(dataDir)}, throwaway: true, log: () => {} });
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
    expect(processes(dataDir).backends.length).toBeGreaterThan(0);

    owner.kill('SIGKILL');
    expect(await waitUntil(() => processesMentioning(dataDir).length === 0, 10_000)).toBe(true);
    expect(await portIsFree(port)).toBe(true);
  });
});

describe('npm run db', () => {
  it('prints its MONGODB_URI, answers there, and stops everything on SIGINT', async () => {
    const dataDir = await tempDir();
    const port = await freeLoopbackPort();
    const db = spawn(
      process.execPath,
      ['--import', 'tsx', 'scripts/db.ts', '--port', String(port), '--data-dir', dataDir],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => db.once('exit', resolve));
    const uri = await new Promise<string>((resolve, reject) => {
      db.stdout.on('data', (chunk: Buffer) => {
        const match = /^MONGODB_URI=(\S+)$/m.exec(chunk.toString());
        if (match) resolve(match[1]!);
      });
      void exited.then(() => reject(new Error('npm run db exited early')));
    });
    expect(uri).toBe(`mongodb://127.0.0.1:${port}/`);
    expect(await answers(uri)).toBe(true);

    db.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(processesMentioning(dataDir)).toEqual([]);
  });
});

describe('npm run db:build', () => {
  it('does nothing on a second run, in under 2 s of its own', async () => {
    const begun = Date.now();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/build-engine.ts']);
    const elapsedMs = Date.now() - begun;
    expect(stdout).toMatch(/^Embedded database is up to date \((\d+\.\d) s\)\.$/m);
    // The script's own figure (after Node and tsx have loaded); the process as a whole gets a margin.
    expect(Number(/up to date \((\d+\.\d) s\)/.exec(stdout)?.[1])).toBeLessThan(2);
    expect(elapsedMs).toBeLessThan(10_000);
  });
});
