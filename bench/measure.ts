import autocannon from 'autocannon';
import type { BenchDatabase } from './database';
import type { Options } from './options';
import { cpuMs, peakRssMb, resetPeakRss, rssMb, totalCpuMs } from './proc';
import type { RequestSpec, Scenario } from './scenarios';
import { SERVER_LABELS, type ServerId, type ServerProcess } from './servers';

/** One measured run of a server under load, and each process's cost at rest. */

export interface RunMeasurement {
  round: number;
  scenario: string;
  server: ServerId;
  responses: number;
  non2xx: number;
  errors: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
  dbCpuMsPerRequest: number | null;
  peakRssMb: number | null;
  /** Load generator (this process) CPU per request, for context. */
  loadGenCpuMsPerRequest: number;
}

export async function drive(origin: string, request: RequestSpec, seconds: number, connections: number) {
  return autocannon({
    url: `${origin}${request.path}`,
    method: request.method,
    headers: request.headers ?? {},
    ...(request.body === undefined ? {} : { body: request.body }),
    connections,
    duration: seconds,
    timeout: 30,
  });
}

export async function measure(
  server: ServerProcess,
  db: BenchDatabase,
  scenario: Scenario,
  request: RequestSpec,
  round: number,
  options: Options,
): Promise<RunMeasurement> {
  resetPeakRss(server.pid);
  const cpuBefore = cpuMs(server.pid);
  // Read the tree at both ends: backends that started or ended meanwhile count too (bench/proc.ts).
  const dbBefore = totalCpuMs(await db.serverPids(), true);
  const selfBefore = process.cpuUsage();
  const result = await drive(server.origin, request, options.duration, options.connections);
  const self = process.cpuUsage(selfBefore);
  if (process.env.BENCH_DEBUG)
    console.error(JSON.stringify({ ...result, latency: undefined, throughput: undefined }));
  const cpuAfter = cpuMs(server.pid);
  const dbPids = await db.serverPids();
  const dbAfter = totalCpuMs(dbPids, true);
  if (cpuBefore === null || cpuAfter === null)
    throw new Error(`${SERVER_LABELS[server.id]} is gone (see ${server.logFile})`);
  const responses = result['2xx'] + result.non2xx;
  const per = (ms: number) => (responses > 0 ? ms / responses : Number.NaN);
  return {
    round,
    scenario: scenario.id,
    server: server.id,
    responses,
    non2xx: result.non2xx,
    errors: result.errors,
    seconds: result.duration,
    rps: responses / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuMsPerRequest: per(cpuAfter - cpuBefore),
    dbCpuMsPerRequest: dbPids.length > 0 ? per(dbAfter - dbBefore) : null,
    peakRssMb: peakRssMb(server.pid),
    loadGenCpuMsPerRequest: per((self.user + self.system) / 1000),
  };
}

export interface IdleReading {
  server: ServerId | 'database';
  /** CPU the process burns with no requests (timers, metrics, GC), ms per second. */
  cpuMsPerSecond: number;
  rssMb: number | null;
}

/** Each process's CPU and memory with no load: its background work and its resting size. */
export async function measureIdle(servers: Map<ServerId, ServerProcess>, db: BenchDatabase, seconds: number) {
  const dbPids = await db.serverPids();
  const before = new Map([...servers].map(([id, server]) => [id, cpuMs(server.pid) ?? 0]));
  const dbBefore = totalCpuMs(dbPids, true);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const readings: IdleReading[] = [...servers].map(([id, server]) => ({
    server: id,
    cpuMsPerSecond: ((cpuMs(server.pid) ?? 0) - (before.get(id) ?? 0)) / seconds,
    rssMb: rssMb(server.pid),
  }));
  if (dbPids.length > 0) {
    readings.push({
      server: 'database',
      cpuMsPerSecond: (totalCpuMs(await db.serverPids(), true) - dbBefore) / seconds,
      rssMb: dbPids.reduce((sum, pid) => sum + (rssMb(pid) ?? 0), 0),
    });
  }
  return readings;
}
