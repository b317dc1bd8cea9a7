import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freeLoopbackPort, waitForExit } from '../src/engine/guarded-child';
import { startRedis } from '../test/support/redis';

/**
 * What clients can make the server and Redis keep (issue 21, rows 1, 10, 11), as figures:
 * `node --import tsx bench/client-growth.ts [heap MB]`. Each runs `npm start` (the embedded
 * database, 2,020 products) in its own process with a private Redis. A heap cap (e.g. 256) shows
 * whether growth is kept or only garbage V8 has not collected yet.
 */

const heapMb = process.argv[2];

async function withServer(
  env: Record<string, string>,
  run: (base: string, rssMb: () => Promise<number>) => Promise<void>,
): Promise<void> {
  const port = await freeLoopbackPort();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'client-growth-'));
  const flags = ['--max-semi-space-size=16', ...(heapMb ? [`--max-old-space-size=${heapMb}`] : [])];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', 'scripts/start.ts'], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const rssMb = async () =>
    Math.round(
      Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024,
    );
  try {
    for (let ready = false; !ready; await sleep(200)) {
      if (child.exitCode !== null) throw new Error('the server did not start');
      ready = await fetch(`${base}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
    }
    await run(base, rssMb);
  } finally {
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 10_000))) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
}

const post = (base: string, body: unknown) =>
  fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });

/** Row 1: 100 × (20 fresh aliases × `nodes` of 100 order ids) and 100 unique operation names. */
async function metricLabels(): Promise<void> {
  await withServer({}, async (base, rssMb) => {
    await post(base, { query: '{ productPage(perPage: 1) { total } }' });
    const before = await rssMb();
    for (let round = 1; round <= 100; round++) {
      const aliases = Array.from({ length: 20 }, (_, alias) => `a${round}_${alias}: nodes(ids: $ids) { id }`);
      const ids = Array.from({ length: 100 }, (_, index) =>
        Buffer.from(`Order:${round * 100 + index}`).toString('base64url'),
      );
      await post(base, { query: `query($ids: [ID!]!) { ${aliases.join(' ')} }`, variables: { ids } });
      const name = `Op${round}_${Math.random().toString(36).slice(2)}`;
      await post(base, { query: `query ${name} { productPage(perPage: 1) { total } }`, operationName: name });
    }
    await sleep(2_000);
    const started = performance.now();
    const text = await (await fetch(`${base}/metrics`)).text();
    const series = text.split('\n').filter((line) => line.startsWith('graphql_')).length;
    console.log(
      `row 1 metric labels: RSS ${before} → ${await rssMb()} MB; /metrics ${(text.length / 1e6).toFixed(2)} MB, ${series} graphql series, scraped in ${Math.round(performance.now() - started)} ms`,
    );
  });
}

/** Row 10: unique 32 kB registrations (padding in a comment) from 8 clients for 20 s. */
async function apqRegistrations(): Promise<void> {
  const redis = await startRedis();
  const inspect = new Redis(redis.url);
  const used = async () => Number(/used_memory:(\d+)/.exec(await inspect.info('memory'))?.[1]) / 1e6;
  try {
    await withServer({ REDIS_URL: redis.url, PERSISTED_OPERATIONS: 'apq' }, async (base) => {
      await sleep(1_000);
      const before = await used();
      const deadline = Date.now() + 20_000;
      let sent = 0;
      const client = async () => {
        while (Date.now() < deadline) {
          const query = `# ${sent++} ${'x'.repeat(32 * 1024 - 80)}\n{ productPage(perPage: 1) { total } }`;
          const sha256Hash = createHash('sha256').update(query).digest('hex');
          await post(base, { query, extensions: { persistedQuery: { version: 1, sha256Hash } } });
        }
      };
      await Promise.all(Array.from({ length: 8 }, client));
      const keys = await inspect.keys('apq:*');
      const ttl = keys[0] ? Math.round((await inspect.pttl(keys[0])) / 60_000) : 0;
      console.log(
        `row 10 APQ: ${sent} registrations in 20 s; Redis ${before.toFixed(1)} → ${(await used()).toFixed(1)} MB, ${keys.length} documents kept (${ttl} min)`,
      );
    });
  } finally {
    inspect.disconnect();
    await redis.stop();
  }
}

/** Row 11: `?utm=<unique>` for 45 s with a 3 s TTL. */
async function tagMembers(): Promise<void> {
  const redis = await startRedis();
  const inspect = new Redis(redis.url);
  try {
    await withServer({ REDIS_URL: redis.url, RESPONSE_CACHE_TTL_MS: '3000' }, async (base) => {
      await sleep(1_000);
      const deadline = Date.now() + 45_000;
      let sent = 0;
      while (Date.now() < deadline) {
        await (await fetch(`${base}/api/v1/products?per_page=2&utm=${sent++}`)).arrayBuffer();
      }
      await sleep(100);
      let members = 0;
      for (const key of await inspect.keys('storefront:cache:tag*:product:1')) {
        members += (await inspect.type(key)) === 'zset' ? await inspect.zcard(key) : await inspect.scard(key);
      }
      const live = (await inspect.keys('storefront:cache:entry:*')).length;
      console.log(`row 11 tags: ${sent} requests; product:1 has ${members} members, ${live} entries live`);
    });
  } finally {
    inspect.disconnect();
    await redis.stop();
  }
}

await metricLabels();
await apqRegistrations();
await tagMembers();
