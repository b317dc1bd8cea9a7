import { median } from './median';
import type { RunMeasurement } from './measure';
import type { Scenario } from './scenarios';
import { SERVER_IDS, type ServerId } from './servers';

/** The rounds of each server and scenario reduced to medians, and the targets of issue 6 checked on them. */

export interface Summary {
  server: ServerId;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
  dbCpuMsPerRequest: number | null;
  /** Highest peak of the rounds. */
  peakRssMb: number | null;
  responses: number;
  non2xx: number;
  errors: number;
}

export function summarise(server: ServerId, runs: RunMeasurement[]): Summary {
  const db = runs.map((run) => run.dbCpuMsPerRequest).filter((value): value is number => value !== null);
  const rss = runs.map((run) => run.peakRssMb).filter((value): value is number => value !== null);
  return {
    server,
    rps: median(runs.map((run) => run.rps)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    cpuMsPerRequest: median(runs.map((run) => run.cpuMsPerRequest)),
    dbCpuMsPerRequest: db.length > 0 ? median(db) : null,
    peakRssMb: rss.length > 0 ? Math.max(...rss) : null,
    responses: runs.reduce((sum, run) => sum + run.responses, 0),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

export interface TargetRow {
  target: string;
  scenario: string;
  value: string;
  limit: string;
  met: boolean | null;
}

export function targetRows(scenarios: Scenario[], results: Map<string, Summary[]>): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const scenario of scenarios) {
    const summaries = results.get(scenario.id) ?? [];
    const get = (id: ServerId) => summaries.find((summary) => summary.server === id);
    const ours = get('ours');
    const baseline = get('baseline');
    if (!ours) continue;
    if (baseline) {
      const limit = scenario.api === 'rest' ? 1.3 : 1.6;
      const value = ours.cpuMsPerRequest / baseline.cpuMsPerRequest;
      rows.push({
        target: 'CPU/req ours÷baseline',
        scenario: scenario.id,
        value: `${value.toFixed(2)}×`,
        limit: `≤ ${limit}×`,
        met: Number.isFinite(value) ? value <= limit : null,
      });
      const p99 = ours.p99Ms / baseline.p99Ms;
      rows.push({
        target: 'p99 ours÷baseline',
        scenario: scenario.id,
        value: `${p99.toFixed(2)}×`,
        limit: '≤ 1.5×',
        met: Number.isFinite(p99) ? p99 <= 1.5 : null,
      });
    }
    const cached = get('ours-cached');
    if (cached) {
      const value = cached.rps / ours.rps;
      const limit = scenario.api === 'rest' ? 5 : 3;
      rows.push({
        target: 'req/s cached÷uncached',
        scenario: scenario.id,
        value: `${value.toFixed(1)}×`,
        limit: `≥ ${limit}×`,
        met: Number.isFinite(value) ? value >= limit : null,
      });
    }
    if (ours.peakRssMb !== null) {
      rows.push({
        target: 'peak RSS ours',
        scenario: scenario.id,
        value: `${ours.peakRssMb.toFixed(0)} MB`,
        limit: '< 200 MB',
        met: ours.peakRssMb < 200,
      });
    }
  }
  return rows;
}

/** Each scenario's medians, one per server, in SERVER_IDS order. */
export function summariseScenarios(scenarios: Scenario[], runs: RunMeasurement[]): Map<string, Summary[]> {
  const summaries = new Map<string, Summary[]>();
  for (const scenario of scenarios) {
    const ids = SERVER_IDS.filter((id) => scenario.requests[id]);
    const list = ids.map((id) =>
      summarise(
        id,
        runs.filter((run) => run.scenario === scenario.id && run.server === id),
      ),
    );
    summaries.set(scenario.id, list);
  }
  return summaries;
}

/** Issue 38's target on one scenario, judged on this run's medians: ours against the fixed stack's floor. */
export interface ServerCostTarget {
  scenario: string;
  /** Where the floor was measured: this scenario, or a REST scenario's GraphQL twin. */
  floorScenario: string;
  ours: number;
  /** createYoga + graphql-jit with none of our guards (bench/peers/yoga.ts). */
  floor: number;
  /** For context, from the floor's scenario: Fastify + Mercurius + jit, and the bare baseline. */
  mercuriusJit: number | null;
  baseline: number | null;
  met: boolean | null;
}

/** Ours may cost at most this times yoga-jit in server CPU per request. */
export const FLOOR_FACTOR = 1.15;

/**
 * Issue 38: ours ≤ 1.15× yoga-jit in server CPU per request on every scenario; a REST scenario
 * is held against yoga-jit on its GraphQL twin (the same operation behind the adapter). A
 * scenario without ours or the floor in this run has no line.
 */
export function serverCostTargets(
  scenarios: Scenario[],
  results: Map<string, Summary[]>,
): ServerCostTarget[] {
  const cpu = (scenario: string, id: ServerId) =>
    results.get(scenario)?.find((summary) => summary.server === id)?.cpuMsPerRequest ?? null;
  const targets: ServerCostTarget[] = [];
  for (const scenario of scenarios) {
    const floorScenario = scenario.api === 'rest' ? scenario.graphqlTwin : scenario.id;
    const ours = cpu(scenario.id, 'ours');
    const floor = floorScenario === undefined ? null : cpu(floorScenario, 'yoga-jit');
    if (ours === null || floor === null || floorScenario === undefined) continue;
    const value = ours / floor;
    targets.push({
      scenario: scenario.id,
      floorScenario,
      ours,
      floor,
      mercuriusJit: cpu(floorScenario, 'mercurius-jit'),
      baseline: cpu(scenario.id, 'baseline'),
      met: Number.isFinite(value) ? value <= FLOOR_FACTOR : null,
    });
  }
  return targets;
}
