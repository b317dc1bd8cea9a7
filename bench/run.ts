import os from 'node:os';
import path from 'node:path';
import { checkScenarios } from './checks';
import { DATABASE_LABELS, openBenchDatabase, type SeedReport } from './database';
import { DATA_DIR, log } from './harness';
import { measureIdle } from './measure';
import { parseOptions, USAGE, UsageError, type Options } from './options';
import { feedEnv, feedLabel, untilFollowing } from './ours-feed';
import { runProfile } from './profile-run';
import { benchmarkReport } from './report';
import { machine, writeResultsFile } from './results-file';
import { runRounds } from './rounds';
import { scenarioData, selectScenarios } from './scenario-selection';
import { buildScenarios, type Scenario } from './scenarios';
import {
  BENCH_JWT_SECRET,
  SERVER_IDS,
  SERVER_LABELS,
  startServers,
  type ServerId,
  type ServerProcess,
  type SharedServerEnv,
} from './servers';
import { serverCostTargets, summariseScenarios, targetRows } from './summary';

/** `npm run bench`: the options, the database, the servers, the checks and rounds, the report. */

const PUBLIC_BASE_URL = 'http://127.0.0.1:4000';

async function main(): Promise<void> {
  let options: Options | 'help';
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    throw error;
  }
  if (options === 'help') {
    console.log(USAGE);
    return;
  }

  const startedAt = new Date();
  const loadAtStart = os.loadavg().map((load) => Number(load.toFixed(2)));
  const dbName = options.smoke ? 'storefront_bench_smoke' : 'storefront_bench';
  const db = await openBenchDatabase({
    spec: { seed: options.seed, products: options.products, orders: options.orders },
    dbName,
    dataDir: path.join(DATA_DIR, 'db'),
    log,
  });
  const servers = new Map<ServerId, ServerProcess>();
  try {
    const scenarios = selectScenarios(buildScenarios(await scenarioData(db, options)), options);
    const env: SharedServerEnv = {
      MONGODB_URI: db.uri,
      MONGODB_DB: dbName,
      JWT_SECRET: BENCH_JWT_SECRET,
      PUBLIC_BASE_URL,
      ...feedEnv(db, options.feed),
    };
    log(feedLabel(db, options.feed));
    if (options.profile) {
      await runProfile(options, scenarios[0] as Scenario, env, db);
      return;
    }

    const needed = SERVER_IDS.filter((id) => scenarios.some((scenario) => scenario.requests[id]));
    const started = await startServers(needed, { env, logDir: path.join(DATA_DIR, 'logs'), log });
    for (const [id, server] of started) servers.set(id, server);
    await untilFollowing(servers, { ...env }, log);

    const checks = await checkScenarios(scenarios, servers, log);
    const idle = await measureIdle(servers, db, options.smoke ? 1 : 3);
    const runs = await runRounds(scenarios, servers, db, options, log);

    const summaries = summariseScenarios(scenarios, runs);
    const targets = targetRows(scenarios, summaries);
    const serverCost = serverCostTargets(scenarios, summaries);
    const finishedAt = new Date();
    const info = machine();
    const database = `${DATABASE_LABELS[db.kind]}; ${feedLabel(db, options.feed)}`;
    console.log(
      benchmarkReport({
        startedAt,
        options,
        database,
        machine: info,
        scenarios,
        summaries,
        checks,
        idle,
        targets,
        serverCost,
      }),
    );

    const file = await writeResultsFile(startedAt, options.smoke, {
      version: 1,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      options,
      machine: {
        ...info,
        loadAverage: undefined,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: info.loadAverage,
      },
      database,
      seed: db.seed satisfies SeedReport,
      servers: Object.fromEntries(
        [...servers].map(([id, server]) => [id, { label: SERVER_LABELS[id], pid: server.pid }]),
      ),
      scenarios: scenarios.map((scenario) => ({
        id: scenario.id,
        title: scenario.title,
        api: scenario.api,
        requests: scenario.requests,
        checks: checks.get(scenario.id),
        medians: summaries.get(scenario.id),
      })),
      idle,
      targets,
      serverCost,
      runs,
    });
    log(`results written to ${path.relative(process.cwd(), file)}`);
    log(`done in ${((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(0)} s`);
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await db.stop();
  }
}

await main();
