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
    const peers = summaries.filter(
      (summary) => !summary.server.startsWith('ours') && summary.server !== 'baseline',
    );
    for (const peer of peers) {
      const value = ours.cpuMsPerRequest / peer.cpuMsPerRequest;
      rows.push({
        target: `CPU/req ours÷${peer.server}`,
        scenario: scenario.id,
        value: `${value.toFixed(2)}×`,
        limit: '< 1×',
        met: Number.isFinite(value) ? value < 1 : null,
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

/** One of issue 29's server targets, judged on one scenario's medians of this run. */
export interface ServerCostTarget {
  scenario: string;
  /** What ours is held against: a peer, or the baseline times a factor. */
  against: ServerId;
  /** Ours' server CPU ms per request may be at most this times the other's. */
  factor: number;
  ours: number;
  other: number;
  met: boolean | null;
}

/**
 * Issue 29: ours ≤ Mercurius + graphql-jit in server CPU per request on every GraphQL scenario,
 * and every REST scenario ≤ 1.3× the bare baseline. A scenario without the other server in this
 * run has no line.
 */
export function serverCostTargets(
  scenarios: Scenario[],
  results: Map<string, Summary[]>,
): ServerCostTarget[] {
  const targets: ServerCostTarget[] = [];
  for (const scenario of scenarios) {
    const summaries = results.get(scenario.id) ?? [];
    const ours = summaries.find((summary) => summary.server === 'ours');
    const [against, factor]: [ServerId, number] =
      scenario.api === 'rest' ? ['baseline', 1.3] : ['mercurius-jit', 1];
    const other = summaries.find((summary) => summary.server === against);
    if (!ours || !other) continue;
    const value = ours.cpuMsPerRequest / other.cpuMsPerRequest;
    targets.push({
      scenario: scenario.id,
      against,
      factor,
      ours: ours.cpuMsPerRequest,
      other: other.cpuMsPerRequest,
      met: Number.isFinite(value) ? value <= factor : null,
    });
  }
  return targets;
}
