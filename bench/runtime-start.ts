import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedDatabase } from '../src/engine';
import { freeLoopbackPort } from '../src/engine/guarded-child';
import { SERVER_NODE_FLAGS } from '../scripts/node-flags';
import { median } from './median';

/**
 * How the production server starts under each way of running TypeScript: spawn → /readyz 200, and
 * resident memory once started, with the start scripts' V8 flags.
 * `node --import tsx bench/runtime-start.ts [label=command …]`.
 */

const RUNS = 5;
const options: Record<string, string[]> = Object.fromEntries(
  (process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : ['tsx=--import tsx scripts/start.ts', 'bundle=dist/start.js']
  ).map((spec) => {
    const [label, command] = spec.split('=') as [string, string];
    return [label, command.split(' ')];
  }),
);

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-runtime-'));
const database = await startEmbeddedDatabase({ dataDir, log: () => undefined });
try {
  console.log(`Node ${process.version}, ${RUNS} starts each, medians\n`);
  console.log('| runtime | start → /readyz 200 | RSS after start |\n|---|--:|--:|');
  for (const [label, args] of Object.entries(options)) {
    const startMs: number[] = [];
    const rssMb: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const port = await freeLoopbackPort();
      const started = performance.now();
      const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...args], {
        env: {
          ...process.env,
          NODE_ENV: 'production',
          MONGODB_URI: database.uri,
          MONGODB_DB: 'runtime_bench',
          JWT_SECRET: 'runtime-bench-secret-at-least-32-characters',
          PUBLIC_BASE_URL: 'https://shop.example',
          PORT: String(port),
          LOG_LEVEL: 'warn',
        },
        stdio: 'ignore',
      });
      for (;;) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (response) => response.status === 200,
          () => false,
        );
        if (ready) break;
        if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      startMs.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      rssMb.push(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    console.log(`| ${label} | ${Math.round(median(startMs))} ms | ${Math.round(median(rssMb))} MB |`);
  }
} finally {
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
