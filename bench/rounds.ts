import type { BenchDatabase } from './database';
import { drive, measure, type RunMeasurement } from './measure';
import type { Options } from './options';
import type { RequestSpec, Scenario } from './scenarios';
import type { ServerId, ServerProcess } from './servers';

/**
 * The run loop: every round runs every scenario on each of its servers, in an order rotated per
 * round and scenario, after one warm-up per server and scenario.
 */
export async function runRounds(
  scenarios: Scenario[],
  servers: Map<ServerId, ServerProcess>,
  db: BenchDatabase,
  options: Options,
  log: (line: string) => void,
): Promise<RunMeasurement[]> {
  const runs: RunMeasurement[] = [];
  const warmed = new Set<string>();
  const totalRuns = options.rounds * scenarios.reduce((sum, s) => sum + Object.keys(s.requests).length, 0);
  let done = 0;
  for (let round = 1; round <= options.rounds; round++) {
    for (const [index, scenario] of scenarios.entries()) {
      const ids = Object.keys(scenario.requests) as ServerId[];
      // Rotate the order every round and scenario, so no server is always first or last.
      const shift = (round - 1 + index) % ids.length;
      for (const id of [...ids.slice(shift), ...ids.slice(0, shift)]) {
        const server = servers.get(id) as ServerProcess;
        const request = scenario.requests[id] as RequestSpec;
        const key = `${scenario.id}/${id}`;
        if (!warmed.has(key) && options.warmup > 0)
          await drive(server.origin, request, options.warmup, options.connections);
        warmed.add(key);
        const run = await measure(server, db, scenario, request, round, options);
        runs.push(run);
        done++;
        log(
          `[${done}/${totalRuns}] round ${round} ${scenario.id} ${id}: ${run.rps.toFixed(0)} req/s, ` +
            `${run.cpuMsPerRequest.toFixed(3)} CPU ms/req, p50 ${run.p50Ms} ms`,
        );
      }
    }
  }
  return runs;
}
