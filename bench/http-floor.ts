import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { useGraphQlJit } from '@envelop/graphql-jit';
import Fastify from 'fastify';
import { createSchema, createYoga } from 'graphql-yoga';
import mercurius from 'mercurius';
import { freeLoopbackPort, waitForExit } from '../src/engine/guarded-child';
import { median } from './median';
import { drive } from './measure';
import { cpuMs } from './proc';

/**
 * `npm run bench:http-floor` (issue 29): what each framework costs per request with nothing
 * behind it. The query reads no data, so the CPU per request is the HTTP layer, the
 * GraphQL request handling and the serialisation alone: bare node:http (the floor), Yoga as
 * createYoga gives it (with graphql-jit, as ours runs), and Mercurius + graphql-jit on Fastify.
 * `ours-app` is src/app.ts's createApp as production runs it (every plugin: request log, metrics,
 * limits, CSRF, cost, persisted operations, graphql-jit, REST, response limit, compression) behind
 * the same node:http guards, on a database it never calls (`{ __typename }` reads nothing).
 * ours-app − yoga-jit is our plugins' share; yoga-jit − node:http is the framework's floor.
 * `lever-proto` is issue 29's next lever as a prototype (bench/lever-prototype.ts): our GraphQL
 * plugins on one envelop instance behind a plain node:http handler.
 *
 * FLOOR_ONLY=a,b measures only those; FLOOR_PROFILE=DIR writes each server's CPU profile there;
 * FLOOR_DROP=rate-limits,metrics runs ours-app without those plugins (PLUGIN_GROUPS below);
 * FLOOR_BEFORE_DIR=DIR adds `ours-before`, createApp of an earlier commit unpacked in DIR
 * (`git archive <commit> src package.json tsconfig.json | tar -x -C DIR`, node_modules linked).
 */

const FRAMEWORKS = [
  'node-http',
  'yoga',
  'yoga-jit',
  'ours-app',
  'ours-before',
  'lever-proto',
  'mercurius-jit',
] as const;
type Framework = (typeof FRAMEWORKS)[number];

const TYPE_DEFS = 'type Query { order(ulid: String!): Order } type Order { ulid: String! }';
const resolvers = { Query: { order: () => null } };
/** A query every schema answers without a resolver of ours: the same work for each server. */
const BODY = JSON.stringify({ query: 'query Floor { __typename }' });

async function serve(framework: Framework, port: number): Promise<void> {
  const host = '127.0.0.1';
  if (framework === 'node-http') {
    // The least a JSON-over-HTTP GraphQL server does: read the body, parse it, answer JSON.
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const { query } = JSON.parse(Buffer.concat(chunks).toString()) as { query: string };
        const body = JSON.stringify({ data: { __typename: query ? 'Query' : null } });
        res.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(body),
        });
        res.end(body);
      });
    });
    server.listen(port, host);
    return;
  }
  if (framework === 'mercurius-jit') {
    const app = Fastify({ logger: false });
    await app.register(mercurius, { schema: TYPE_DEFS, resolvers, path: '/graphql', jit: 1 });
    await app.listen({ port, host });
    return;
  }
  if (framework === 'ours-app' || framework === 'ours-before') {
    // FLOOR_BEFORE_DIR: a copy of an earlier commit (`git archive`), measured in the same run.
    const root =
      framework === 'ours-before'
        ? pathToFileURL(`${path.resolve(process.env.FLOOR_BEFORE_DIR ?? '.')}/`)
        : new URL('../', import.meta.url);
    await serveOurApp(port, host, root);
    return;
  }
  if (framework === 'lever-proto') {
    const { loadConfig } = await import('../src/config');
    const { serveLeverPrototype } = await import('./lever-prototype');
    serveLeverPrototype(loadConfig(FLOOR_SETTINGS), port, host);
    return;
  }
  const yoga = createYoga({
    schema: createSchema({ typeDefs: TYPE_DEFS, resolvers }),
    logging: false,
    landingPage: false,
    plugins: framework === 'yoga-jit' ? [useGraphQlJit()] : [],
    // As ours runs it: node:http counts the body (src/http/node-guards.ts), Yoga does not again.
    maxRequestBodySize: false,
  });
  createServer(yoga).listen(port, host);
}

/** Production settings, the database never reached. */
const FLOOR_SETTINGS = {
  NODE_ENV: 'production',
  MONGODB_URI: 'mongodb://127.0.0.1:9/floor',
  JWT_SECRET: 'floor-secret-of-at-least-32-characters-0000',
  PUBLIC_BASE_URL: 'http://127.0.0.1:4000',
  LOG_LEVEL: 'warn',
  RESPONSE_CACHE_TTL_MS: '0',
  // One client at full speed: limits on, high enough never to refuse it.
  RATE_LIMIT_REQUESTS_PER_MINUTE: '100000000',
  RATE_LIMIT_COST_PER_MINUTE: '1000000000000',
  // FLOOR_ENV='{"METRICS":"off"}': what one setting's plugins cost.
  ...(JSON.parse(process.env.FLOOR_ENV ?? '{}') as Record<string, string>),
};

/** createApp with production settings; the MongoClient is never connected (nothing reads). */
async function serveOurApp(port: number, host: string, root: URL): Promise<void> {
  const source = (module: string) => new URL(`src/${module}.ts`, root).href;
  const { MongoClient } = await import('mongodb');
  const { loadConfig } = (await import(source('config'))) as typeof import('../src/config');
  const { createLogger } = (await import(source('logger'))) as typeof import('../src/logger');
  const { createApp } = (await import(source('app'))) as typeof import('../src/app');
  const { createViewerResolver } = (await import(
    source('auth/tokens')
  )) as typeof import('../src/auth/tokens');
  const { guardRequests } = (await import(
    source('http/node-guards')
  )) as typeof import('../src/http/node-guards');
  const config = loadConfig(FLOOR_SETTINGS);
  const client = new MongoClient(config.mongo.uri as string);
  const app = createApp({
    config,
    database: { client, db: client.db('floor'), close: () => client.close() },
    resolveViewer: createViewerResolver({
      ...config.jwt,
      secret: 'floor-secret-of-at-least-32-characters-0000',
    }),
    logger: createLogger(config.logLevel),
    isDraining: () => false,
    bodiesLimitedUpstream: true,
    plugins: process.env.FLOOR_DROP ? [dropPlugins(new Set(process.env.FLOOR_DROP.split(',')))] : [],
  });
  createServer(guardRequests(app, { maxBodyBytes: config.maxBodyBytes })).listen(port, host);
}

/**
 * Where createApp's plugins are told apart, by a text their hooks' source holds: a group runs from
 * the plugin that holds `first` to the one that holds `last` (a plugin's children are inserted
 * right after it). Bench only: FLOOR_DROP=rate-limits,metrics measures ours without them.
 */
const PLUGIN_GROUPS: Record<string, { first: string; last?: string }> = {
  'request-log': { first: 'x-request-id' },
  'http-guards': { first: 'authorizationCount' },
  health: { first: '/healthz' },
  'metrics-access': { first: 'openWithoutToken' },
  metrics: { first: 'addPlugin(endpoint)', last: 'labelsOfContext' },
  'start-page': { first: 'wantsHtml' },
  'client-errors': { first: 'invalidRequestReason' },
  csrf: { first: 'wasTheRequestAlreadyPreflightChecked' },
  limits: { first: 'addPlugin(armor)', last: 'costOf' },
  'disable-introspection': { first: 'disabledIntrospection' },
  'rate-limits': { first: 'countedApi' },
  jit: { first: 'setExecuteFn(executeFn)' },
  rest: { first: 'PREFIX' },
  'not-found': { first: 'graphqlEndpoint}/' },
  'response-limit': { first: 'jsonLengthOf' },
  compression: { first: 'negotiateEncoding' },
};

function sourceOf(plugin: object | undefined): string {
  return Object.values(plugin ?? {})
    .filter((value) => typeof value === 'function')
    .map(String)
    .join('\n');
}

/** A plugin that, at start, swaps the named groups in the plugin list for no-ops. */
function dropPlugins(names: Set<string>): import('graphql-yoga').Plugin {
  return {
    onPluginInit({ plugins }) {
      const list = plugins as object[];
      const dropped = new Set<string>();
      let open: { name: string; last: string } | undefined;
      for (let index = 0; index < list.length; index++) {
        const source = sourceOf(list[index]);
        let name = open?.name;
        if (!open) {
          const found = Object.entries(PLUGIN_GROUPS).find(([, group]) => source.includes(group.first));
          name = found?.[0];
          if (found?.[1].last && !source.includes(found[1].last))
            open = { name: found[0], last: found[1].last };
        } else if (source.includes(open.last)) open = undefined;
        if (name && names.has(name)) {
          list[index] = {};
          dropped.add(name);
        }
      }
      if (process.env.FLOOR_DEBUG)
        console.error('dropped', list.filter((plugin) => sourceOf(plugin) === '').length, 'plugins');
      const missing = [...names].filter((name) => !dropped.has(name));
      if (missing.length) throw new Error(`FLOOR_DROP: no plugin found for ${missing.join(', ')}`);
    },
  };
}

async function measureFramework(framework: Framework, seconds: number, rounds: number) {
  const port = await freeLoopbackPort();
  const child = spawn(
    process.execPath,
    [
      // FLOOR_PROFILE=DIR: each server writes a CPU profile there when it is stopped.
      ...(process.env.FLOOR_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.FLOOR_PROFILE}`] : []),
      '--import',
      'tsx',
      'bench/http-floor.ts',
      '--serve',
      framework,
      String(port),
    ],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const origin = `http://127.0.0.1:${port}`;
  const request = {
    method: 'POST' as const,
    path: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: BODY,
  };
  try {
    for (let attempt = 0; ; attempt++) {
      const answer = await fetch(`${origin}/graphql`, { ...request, signal: AbortSignal.timeout(1_000) })
        .then((response) => response.json() as Promise<{ data?: unknown }>)
        .catch(() => undefined);
      if (answer?.data) break;
      if (attempt > 150) throw new Error(`${framework} did not answer`);
      await sleep(200);
    }
    await drive(origin, request, 1, 10);
    const perRequest: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = cpuMs(child.pid as number) as number;
      const result = await drive(origin, request, seconds, 10);
      const after = cpuMs(child.pid as number) as number;
      perRequest.push(((after - before) * 1000) / result.requests.total);
      if (process.env.FLOOR_DEBUG || process.env.FLOOR_PROFILE)
        console.error(
          framework,
          result.requests.total,
          'requests',
          result.non2xx,
          'non-2xx',
          result.errors,
          'errors',
        );
    }
    return perRequest;
  } finally {
    child.kill('SIGTERM');
    await waitForExit(child, 5_000);
  }
}

const args = process.argv.slice(2);
if (args[0] === '--serve') {
  // A clean exit, so a --cpu-prof run writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  await serve(args[1] as Framework, Number(args[2]));
} else {
  const seconds = Number(args[args.indexOf('--duration') + 1] || 3);
  const rounds = Number(args[args.indexOf('--rounds') + 1] || 3);
  const load = () =>
    os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' / ');
  console.log(`load at start ${load()}; ${rounds} rounds × ${seconds} s, 10 connections, one POST /graphql`);
  const results = new Map<Framework, number[]>();
  for (let round = 0; round < rounds; round++)
    for (const framework of FRAMEWORKS.filter(
      (id) =>
        (id !== 'ours-before' || process.env.FLOOR_BEFORE_DIR !== undefined) &&
        (!process.env.FLOOR_ONLY || process.env.FLOOR_ONLY.split(',').includes(id)),
    ))
      results.set(framework, [
        ...(results.get(framework) ?? []),
        ...(await measureFramework(framework, seconds, 1)),
      ]);
  const floor = median(results.get('node-http') ?? []);
  console.log('\n| server | CPU µs/request (median) | − node:http | runs |\n| --- | --: | --: | --- |');
  for (const [framework, values] of results) {
    const value = median(values);
    console.log(
      `| ${framework} | ${value.toFixed(0)} | ${(value - floor).toFixed(0)} | ${values.map((v) => v.toFixed(0)).join(', ')} |`,
    );
  }
  console.log(`\nload at end ${load()}`);
}
