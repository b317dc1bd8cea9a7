import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BenchDatabase } from './database';
import { DATA_DIR, log, RESULTS_DIR, timestamp } from './harness';
import { drive, measure } from './measure';
import { untilFollowing } from './ours-feed';
import { UsageError, type Options } from './options';
import { formatGcSummary, readGcSummary } from './gc-trace';
import { formatProfileSummary, readProfile, summariseProfile } from './profile-summary';
import type { Scenario } from './scenarios';
import {
  buildBundles,
  SERVER_LABELS,
  startServers,
  type ServerProcess,
  type SharedServerEnv,
} from './servers';

/** `--profile`: one scenario on one server under node --cpu-prof, summarised by self time. */

/** The main thread's profile: the one whose code includes our src/ (else the biggest). */
export async function mainThreadProfile(folder: string): Promise<string> {
  let best: { file: string; score: number } | undefined;
  for (const name of await readdir(folder)) {
    if (!name.endsWith('.cpuprofile')) continue;
    const file = path.join(folder, name);
    const profile = await readProfile(file);
    const ours = profile.nodes.filter((node) => node.callFrame.url.includes('/src/')).length;
    const score = ours * 1e9 + profile.samples.length;
    if (!best || score > best.score) best = { file, score };
  }
  if (!best) throw new Error(`no .cpuprofile was written in ${folder}`);
  return best.file;
}

export async function runProfile(
  options: Options,
  scenario: Scenario,
  env: SharedServerEnv,
  db: BenchDatabase,
) {
  const id = options.profileServer;
  const request = scenario.requests[id];
  if (!request) throw new UsageError(`${id} does not take part in ${scenario.id}`);
  // Node writes one profile per thread (tsx's loader hooks run in a worker): a folder per run.
  const profileDir = path.join(DATA_DIR, 'profiles', `${id}-${scenario.id}-${timestamp(new Date())}`);
  await mkdir(profileDir, { recursive: true });
  // Built before the clock starts: the profile's window is counted from the spawn.
  const entries = buildBundles([id], log);
  const spawnedAt = performance.now();
  const servers = await startServers([id], {
    entries,
    env,
    logDir: path.join(DATA_DIR, 'logs'),
    // --trace-gc-nvp: the collections' lines go to the server's log, read below for the measured run.
    nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--trace-gc-nvp'],
    log,
  });
  const server = servers.get(id) as ServerProcess;
  await untilFollowing(servers, { ...env }, log);
  let window: { fromMs: number; toMs: number };
  let responses = 0;
  try {
    if (options.warmup > 0) await drive(server.origin, request, options.warmup, options.connections);
    const from = performance.now() - spawnedAt;
    const run = await measure(server, db, scenario, request, 1, options);
    window = { fromMs: from, toMs: performance.now() - spawnedAt };
    responses = run.responses;
    log(
      `${run.responses} responses, ${run.rps.toFixed(0)} req/s, ${run.cpuMsPerRequest.toFixed(3)} CPU ms/req (profiler on)`,
    );
  } finally {
    await server.stop();
  }
  const file = await mainThreadProfile(profileDir);
  // Only the measured run: start-up (tsx compiling, schema building) and warm-up are left out.
  const summary = summariseProfile(await readProfile(file), 15, window);
  const gc = formatGcSummary(await readGcSummary(server.logFile, window), responses);
  const text = [
    `## CPU profile: ${SERVER_LABELS[id]}, ${scenario.title}`,
    '',
    `Profile: ${path.relative(process.cwd(), file)}, samples of the measured ${options.duration} s run only ` +
      `(from ${(window.fromMs / 1000).toFixed(1)} s to ${(window.toMs / 1000).toFixed(1)} s after spawn), ` +
      `${options.connections} connections, after ${options.warmup} s of warm-up.`,
    '',
    formatProfileSummary(summary, 12, responses),
    '',
    gc,
  ].join('\n');
  console.log(text);
  await mkdir(RESULTS_DIR, { recursive: true });
  const out = path.join(RESULTS_DIR, `profile-${id}-${scenario.id}-${timestamp(new Date())}.md`);
  await writeFile(out, `${text}\n`);
  log(`summary written to ${path.relative(process.cwd(), out)}`);
}
