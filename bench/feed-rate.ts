import type { Collection, Db, Document } from 'mongodb';
import type { RunningServer } from '../src/server';
import { currentRows } from './projection';
import { percentile as percentileOf } from './median';

/**
 * Issue 26: the change feed under a steady stream of outside writes (bench/outside-writes.ts
 * --rate N --seconds S). Three windows of S seconds, each writing N renames a second to products
 * no earlier write touched:
 *   A. no server: what the writes alone cost the database;
 *   B. one server following (response cache on): + the feed's polls and the grams it writes;
 *      every write timed until its grams are current, the feed's lag read from /metrics;
 *   C. as B, plus one probe a second through that server: a rename of a product on a cached
 *      page (until a search finds it, until the cached page shows it), then a product moved in or
 *      out of the category (until page 2's total moves).
 */

export interface FeedRateOptions {
  db: Db;
  products: Collection<Document>;
  rate: number;
  seconds: number;
  /** CPU milliseconds the database has used so far (all its processes). */
  databaseCpuMs: () => Promise<number>;
  startServer: () => Promise<RunningServer>;
}

const PAGE = '/api/v1/products?category=Gift%20Cards&per_page=15';
/** At most this many writes in flight: past it the writer waits, and the rate it reached says so. */
const MAX_IN_FLIGHT = 100;
const GRAMS_POLL_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '—');

/** Of the writes that got there (Infinity: not within the wait). */
const percentile = (values: number[], p: number) => percentileOf(values.filter(Number.isFinite), p);

const spread = (values: number[], unit = 'ms') =>
  `p50 ${ms(percentile(values, 50))} ${unit}, p99 ${ms(percentile(values, 99))} ${unit}, max ${ms(percentile(values, 100))} ${unit} (n=${values.filter(Number.isFinite).length}${values.some((v) => !Number.isFinite(v)) ? `, ${values.filter((v) => !Number.isFinite(v)).length} not within 10 s` : ''})`;

async function json(server: RunningServer, path: string): Promise<Document> {
  return (await (await fetch(`${server.url}${path}`)).json()) as Document;
}

/** Milliseconds from `since` until `check` holds (polled every 20 ms, at most 10 s). */
async function until(since: number, check: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - since;
    if (performance.now() - since > 10_000) return Number.NaN;
    await sleep(20);
  }
}

/** Times each written product until its grams are current (one `$in` read every 100 ms). */
function gramsWatcher(db: Db, products: Collection<Document>) {
  const outstanding = new Map<unknown, { word: string; started: number }>();
  const times: number[] = [];
  let stopping = false;
  let patience = 10_000;
  const loop = (async () => {
    let stoppedAt = Number.POSITIVE_INFINITY;
    while (!stopping || (outstanding.size > 0 && performance.now() - stoppedAt < patience)) {
      if (stopping && stoppedAt === Number.POSITIVE_INFINITY) stoppedAt = performance.now();
      if (outstanding.size > 0) {
        const docs = await products.find({ _id: { $in: [...outstanding.keys()] } } as Document).toArray();
        const current = await currentRows(db, docs);
        const now = performance.now();
        for (const doc of docs) {
          const write = outstanding.get(doc._id);
          if (write && String(doc.name).includes(write.word) && current.has(doc._id)) {
            times.push(now - write.started);
            outstanding.delete(doc._id);
          }
        }
      }
      await sleep(GRAMS_POLL_MS);
    }
  })();
  return {
    add: (id: unknown, word: string, started: number) => outstanding.set(id, { word, started }),
    /** Stops once every write is timed, or `patienceMs` after this call. */
    async finish(patienceMs = 10_000) {
      patience = patienceMs;
      stopping = true;
      await loop;
      return { times, unresolved: outstanding.size };
    },
  };
}

/** The products' lag gauge from /metrics, every 250 ms. */
function lagSampler(server: RunningServer) {
  const samples: number[] = [];
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const match = /^change_feed_lag_seconds\{[^}]*collection="products"[^}]*\} (\S+)$/m.exec(text);
      if (match) samples.push(Number(match[1]) * 1000);
      await sleep(250);
    }
  })();
  return {
    async finish() {
      stopping = true;
      await loop;
      return samples;
    },
  };
}

interface Target {
  _id: unknown;
  name: string;
}

/** `rate` renames a second for `seconds` seconds, each to a product of its own. */
async function writeSteadily(
  products: Collection<Document>,
  targets: Target[],
  rate: number,
  onWrite: (target: Target, word: string, started: number) => void = () => undefined,
) {
  const inFlight = new Set<Promise<unknown>>();
  const tag = Date.now().toString(36);
  const started = performance.now();
  for (const [index, target] of targets.entries()) {
    const due = started + (index * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    const word = `zqr${tag}${index.toString(36)}`;
    const sent = performance.now();
    onWrite(target, word, sent);
    const write = products
      .updateOne({ _id: target._id } as Document, {
        $set: { name: `${target.name} ${word}`, updated_at: new Date() },
      })
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
  }
  await Promise.all(inFlight);
  return (targets.length * 1000) / (performance.now() - started);
}

/** One probe a second until `running` turns false: search-visible, cache-purged, total-updated. */
async function probe(server: RunningServer, products: Collection<Document>, running: () => boolean) {
  const gifts = await products
    .find({ category_key: 'gift cards' }, { projection: { name: 1 } })
    .sort({ _id: 1 })
    .limit(16)
    .toArray();
  const mover = gifts.pop()!;
  const timings = { search: [] as number[], purge: [] as number[], total: [] as number[] };
  let out = false;
  for (let round = 0; running(); round++) {
    const tick = performance.now();
    const target = gifts[round % gifts.length]!;
    await json(server, PAGE);
    const word = `zqp${Date.now().toString(36)}${round}`;
    const started = performance.now();
    await products.updateOne(
      { _id: target._id },
      { $set: { name: `${target.name} ${word}`, updated_at: new Date() } },
    );
    const [search, purge] = await Promise.all([
      until(started, async () => (await json(server, `/api/v1/products?search=${word}`)).meta.total === 1),
      until(started, async () => JSON.stringify(await json(server, PAGE)).includes(word)),
    ]);
    timings.search.push(search);
    timings.purge.push(purge);
    const before = (await json(server, `${PAGE}&page=2`)).meta.total as number;
    const moved = performance.now();
    await products.updateOne(
      { _id: mover._id },
      { $set: { category_key: out ? 'gift cards' : 'elsewhere', updated_at: new Date() } },
    );
    const expected = before + (out ? 1 : -1);
    out = !out;
    timings.total.push(
      await until(moved, async () => (await json(server, `${PAGE}&page=2`)).meta.total === expected),
    );
    const rest = tick + 1000 - performance.now();
    if (rest > 0) await sleep(rest);
  }
  if (out)
    await products.updateOne(
      { _id: mover._id },
      { $set: { category_key: 'gift cards', updated_at: new Date() } },
    );
  await products.bulkWrite(
    gifts.map((gift) => ({
      updateOne: { filter: { _id: gift._id }, update: { $set: { name: gift.name, updated_at: new Date() } } },
    })),
  );
  return timings;
}

export async function feedAtRate(options: FeedRateOptions): Promise<void> {
  const { products, rate, seconds, databaseCpuMs } = options;
  const perWindow = rate * seconds;
  const count = await products.estimatedDocumentCount();
  // Evenly spread own ids (the generator's `_id` = id, from 1), past the probes' first gift cards.
  const stride = Math.floor((count - 1000) / (3 * perWindow));
  const ids = Array.from({ length: 3 * perWindow }, (_, index) => 1000 + index * stride);
  const targets = (await products
    .find({ _id: { $in: ids } } as Document, { projection: { name: 1 } })
    .sort({ _id: 1 })
    .toArray()) as Target[];
  if (targets.length < 3 * perWindow)
    throw new Error(`only ${targets.length} of ${3 * perWindow} products found`);
  const windows = [0, 1, 2].map((window) => targets.filter((_, index) => index % 3 === window));

  const cpu = async (run: () => Promise<number>) => {
    const before = await databaseCpuMs();
    const started = performance.now();
    const achieved = await run();
    // The last second's writes are still being followed: the window takes in one more poll.
    await sleep(1_500);
    const elapsed = performance.now() - started;
    return { percent: (((await databaseCpuMs()) - before) / elapsed) * 100, achieved };
  };
  const line = (label: string, result: { percent: number; achieved: number }) =>
    console.log(
      `${label}: database CPU ${result.percent.toFixed(1)} % of a core, ${result.achieved.toFixed(1)} writes/s reached`,
    );

  // A first start stores the feed's watermark (with none it starts at the newest write): the
  // server started after window A then resumes before A's writes and gives them current grams.
  await (await options.startServer()).close();
  const bare = await cpu(() => writeSteadily(products, windows[0]!, rate));
  line(`A. ${rate} writes/s for ${seconds} s, no server`, bare);

  const server = await options.startServer();
  // The feed resumes from its watermark: window A's writes are caught up before B is timed.
  const backlog = gramsWatcher(options.db, products);
  for (const target of windows[0]!) backlog.add(target._id, '', 0);
  const caughtUp = await backlog.finish(120_000);
  if (caughtUp.unresolved > 0)
    console.log(`   (${caughtUp.unresolved} of window A's writes not caught up after 2 min)`);
  await sleep(2_000);

  const grams = gramsWatcher(options.db, products);
  let lag = lagSampler(server);
  const followed = await cpu(() =>
    writeSteadily(products, windows[1]!, rate, (target, word, started) =>
      grams.add(target._id, word, started),
    ),
  );
  const gramsB = await grams.finish();
  const lagB = await lag.finish();
  line(`B. the same with one server following`, followed);
  console.log(`   the feed's cost: +${(followed.percent - bare.percent).toFixed(1)} % of a core`);
  console.log(`   write → grams current: ${spread(gramsB.times)} (polled every ${GRAMS_POLL_MS} ms)`);
  console.log(`   feed lag (/metrics every 250 ms): ${spread(lagB)}`);

  const gramsC = gramsWatcher(options.db, products);
  lag = lagSampler(server);
  let writing = true;
  const probes = probe(server, products, () => writing);
  const probed = await cpu(async () => {
    const achieved = await writeSteadily(products, windows[2]!, rate, (target, word, started) =>
      gramsC.add(target._id, word, started),
    );
    writing = false;
    await probes;
    return achieved;
  });
  const timings = await probes;
  const gramsAtC = await gramsC.finish();
  const lagC = await lag.finish();
  line(`C. the same with one probe a second through the server`, probed);
  console.log(`   write → grams current: ${spread(gramsAtC.times)}`);
  console.log(`   feed lag: ${spread(lagC)}`);
  console.log(`   write → search finds it: ${spread(timings.search)}`);
  console.log(`   write → cached page shows it (60 s TTL): ${spread(timings.purge)}`);
  console.log(`   write → page 2's total moves (through the cache): ${spread(timings.total)}`);

  // Back to the generated names, with the server following so their grams are current again.
  await products.bulkWrite(
    targets.map((target) => ({
      updateOne: {
        filter: { _id: target._id } as Document,
        update: { $set: { name: target.name, updated_at: new Date() } },
      },
    })),
    { ordered: false },
  );
  const restore = gramsWatcher(options.db, products);
  for (const target of targets) restore.add(target._id, '', 0);
  const restored = await restore.finish(120_000);
  await server.close();
  if (restored.unresolved > 0)
    console.log(`   (${restored.unresolved} restored names without current grams after 10 s)`);
}
