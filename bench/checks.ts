import type { RequestSpec, Scenario } from './scenarios';
import type { ServerId, ServerProcess } from './servers';

/** The response checks: one request per server before measuring, compared with ours and the baseline. */

export interface ScenarioCheck {
  server: ServerId;
  status: number;
  bytes: number;
  ok: boolean;
  note: string;
}

export async function fetchOnce(
  origin: string,
  request: RequestSpec,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${origin}${request.path}`, {
    method: request.method,
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  return { status: response.status, text: await response.text() };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One request per server before measuring: right status, no GraphQL errors, same data as ours. */
export async function checkScenario(
  scenario: Scenario,
  servers: Map<ServerId, ServerProcess>,
): Promise<ScenarioCheck[]> {
  const replies = new Map<ServerId, { status: number; text: string }>();
  for (const [id, request] of Object.entries(scenario.requests) as [ServerId, RequestSpec][]) {
    const server = servers.get(id);
    if (server) replies.set(id, await fetchOnce(server.origin, request));
  }
  const baseline = replies.get('baseline');
  const ours = replies.get('ours');
  const oursData = ours ? (parseJson(ours.text) as { data?: unknown } | undefined) : undefined;
  const baselineItems = baseline
    ? (parseJson(baseline.text) as { data?: unknown[] } | undefined)?.data
    : undefined;
  const checks: ScenarioCheck[] = [];
  for (const [id, reply] of replies) {
    const body = parseJson(reply.text) as Record<string, unknown> | undefined;
    let ok = reply.status === 200 && body !== undefined;
    let note = '';
    if (ok && scenario.api === 'graphql' && id !== 'baseline') {
      if (body?.errors) {
        ok = false;
        note = `GraphQL errors: ${JSON.stringify(body.errors).slice(0, 200)}`;
      } else if (id !== 'ours') {
        note =
          JSON.stringify(body?.data) === JSON.stringify(oursData?.data)
            ? 'same data as ours'
            : 'DATA DIFFERS from ours';
      }
    } else if (ok && scenario.api === 'rest' && id.startsWith('ours') && baseline) {
      note = reply.text === baseline.text ? 'bytes identical to baseline' : 'BYTES DIFFER from baseline';
    } else if (ok && id === 'sofa') {
      const items = (body as { items?: unknown[] } | undefined)?.items;
      note =
        Array.isArray(items) && Array.isArray(baselineItems) && items.length === baselineItems.length
          ? `${items.length} items, as baseline`
          : 'ITEM COUNT DIFFERS from baseline';
    }
    if (!ok && !note) note = `status ${reply.status}: ${reply.text.slice(0, 200)}`;
    checks.push({ server: id, status: reply.status, bytes: Buffer.byteLength(reply.text), ok, note });
  }
  return checks;
}

/**
 * Checks every scenario and logs what failed or differs; a server that failed a scenario's check
 * is taken out of that scenario (its `requests` entry is deleted), so it is not measured.
 */
export async function checkScenarios(
  scenarios: Scenario[],
  servers: Map<ServerId, ServerProcess>,
  log: (line: string) => void,
): Promise<Map<string, ScenarioCheck[]>> {
  const checks = new Map<string, ScenarioCheck[]>();
  for (const scenario of scenarios) {
    const result = await checkScenario(scenario, servers);
    checks.set(scenario.id, result);
    for (const check of result) {
      if (!check.ok || /DIFFER/.test(check.note))
        log(`check ${scenario.id} / ${check.server}: ${check.note}`);
      if (!check.ok) delete scenario.requests[check.server];
    }
  }
  return checks;
}
