import type { ScenarioCheck } from './checks';
import type { IdleReading } from './measure';
import type { Options } from './options';
import type { Machine } from './results-file';
import type { Scenario } from './scenarios';
import { SERVER_LABELS } from './servers';
import { FLOOR_FACTOR, type ServerCostTarget, type Summary, type TargetRow } from './summary';

/** The Markdown printed on stdout: a table per scenario, the processes at rest, the targets. */

const fixed = (value: number | null, digits: number) =>
  value === null || !Number.isFinite(value) ? '—' : value.toFixed(digits);
const ratio = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—';

/** A Markdown table: `align` per column is `l` (left) or `r` (right) or `c` (centre). */
function markdownTable(header: string[], align: string, rows: string[][]): string {
  const rule = [...align].map((side) => (side === 'r' ? '-:' : side === 'c' ? ':-:' : '---'));
  return [header, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function scenarioTable(scenario: Scenario, summaries: Summary[], checks: ScenarioCheck[]): string {
  const ours = summaries.find((summary) => summary.server === 'ours');
  const rows = summaries.map((summary) => {
    const check = checks.find((entry) => entry.server === summary.server);
    const isOurs = summary.server === 'ours';
    return [
      isOurs ? `**${SERVER_LABELS[summary.server]}**` : SERVER_LABELS[summary.server],
      fixed(summary.rps, 0),
      fixed(summary.p50Ms, 1),
      fixed(summary.p99Ms, 1),
      fixed(summary.cpuMsPerRequest, 3),
      fixed(summary.dbCpuMsPerRequest, 2),
      fixed(summary.peakRssMb, 0),
      isOurs || !ours ? '' : ratio(ours.cpuMsPerRequest, summary.cpuMsPerRequest),
      isOurs || !ours ? '' : ratio(ours.rps, summary.rps),
      check ? String(check.bytes) : '',
      [
        check?.note ?? '',
        summary.non2xx + summary.errors > 0 ? `${summary.non2xx} non-2xx, ${summary.errors} errors` : '',
      ]
        .filter(Boolean)
        .join('; '),
    ];
  });
  const header = ['server', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'DB CPU ms/req', 'peak RSS MB'];
  header.push('ours÷this CPU/req', 'ours÷this req/s', 'bytes', 'check');
  return `### ${scenario.title}\n\n${markdownTable(header, 'lrrrrrrrrrl', rows)}`;
}

/**
 * "gql-order: ours ÷ yoga-jit 1.37× (0.563 vs 0.411 ms; Mercurius + jit 0.301, baseline 0.318) — missed",
 * one line per scenario.
 */
function serverCostLines(targets: ServerCostTarget[]): string {
  if (targets.length === 0) return 'No scenario of this run has ours beside yoga-jit (add it to --servers).';
  const ms = (value: number | null) => (value === null ? '—' : value.toFixed(3));
  return targets
    .map((target) => {
      const outcome = target.met === null ? 'unknown' : target.met ? 'met' : 'missed';
      const where = target.floorScenario === target.scenario ? '' : ` on ${target.floorScenario}`;
      return (
        `- ${target.scenario}: ours ÷ yoga-jit${where} ${(target.ours / target.floor).toFixed(2)}× ` +
        `(${ms(target.ours)} vs ${ms(target.floor)} ms; Mercurius + jit ${ms(target.mercuriusJit)}, ` +
        `baseline ${ms(target.baseline)}) — ${outcome} (≤ ${FLOOR_FACTOR}×)`
      );
    })
    .join('\n');
}

function targetTable(rows: TargetRow[]): string {
  return markdownTable(
    ['target', 'scenario', 'value', 'limit', 'met'],
    'llrrc',
    rows.map((row) => [
      row.target,
      row.scenario,
      row.value,
      row.limit,
      row.met === null ? '?' : row.met ? 'yes' : '**no**',
    ]),
  );
}

function idleTable(readings: IdleReading[]): string {
  return markdownTable(
    ['process', 'idle CPU ms/s', 'RSS MB'],
    'lrr',
    readings.map((row) => [
      row.server === 'database' ? 'database' : SERVER_LABELS[row.server],
      fixed(row.cpuMsPerSecond, 1),
      fixed(row.rssMb, 0),
    ]),
  );
}

export interface ReportFacts {
  startedAt: Date;
  options: Pick<Options, 'products' | 'orders' | 'seed' | 'rounds' | 'duration' | 'connections'>;
  database: string;
  machine: Machine;
  scenarios: Scenario[];
  summaries: Map<string, Summary[]>;
  checks: Map<string, ScenarioCheck[]>;
  idle: IdleReading[];
  targets: TargetRow[];
  serverCost: ServerCostTarget[];
}

/** The whole report as printed: what ran where, then the tables. */
export function benchmarkReport(facts: ReportFacts): string {
  const { startedAt, options, machine: info } = facts;
  const sections = facts.scenarios.map((scenario) =>
    scenarioTable(scenario, facts.summaries.get(scenario.id) ?? [], facts.checks.get(scenario.id) ?? []),
  );
  const header = [
    `## Benchmark ${startedAt.toISOString()}`,
    '',
    `${options.products} products, ${options.orders} orders (seed ${options.seed}) on ` +
      `${facts.database}; ${options.rounds} round(s) × ` +
      `${options.duration} s per server per scenario, ${options.connections} connections, medians. ` +
      `${info.cpus} × ${info.cpuModel}, ${info.memoryGiB} GiB, Node ${info.node}.`,
    '',
  ].join('\n');
  return (
    `\n${header}\n${sections.join('\n\n')}\n\n### At rest (before the rounds)\n\n${idleTable(facts.idle)}\n\n` +
    `### Targets (issue 6)\n\n${targetTable(facts.targets)}\n\n` +
    `### Server cost against the fixed stack's floor (issue 38: ours ≤ ${FLOOR_FACTOR}× yoga-jit)\n\n${serverCostLines(facts.serverCost)}\n`
  );
}
