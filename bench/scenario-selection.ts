import { SignJWT } from 'jose';
import type { OrderDoc } from '../src/db/documents';
import type { BenchDatabase } from './database';
import { UsageError, type Options } from './options';
import type { Scenario } from './scenarios';
import { BENCH_JWT_SECRET, type ServerId } from './servers';

/** Which scenarios run, on which servers, with the ids, terms and token they need from the data. */

const PER_PAGE = 15;
const LIST_SEARCH = 'gift';
const SEARCH_TERM = 'soundwave';

export async function scenarioData(db: BenchDatabase, options: Options) {
  const orders = db.database.db.collection<OrderDoc>('orders');
  const order = await orders.findOne(
    { id: Math.max(1, Math.ceil(options.orders / 2)) },
    { projection: { _id: 0 } },
  );
  if (!order) throw new Error('the benchmark database has no orders');
  const orderToken = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(order.customer_id)
    .setIssuedAt()
    .setExpirationTime('12h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
  return {
    products: options.products,
    perPage: PER_PAGE,
    orderUlid: order.ulid,
    orderToken,
    listSearch: LIST_SEARCH,
    searchTerm: SEARCH_TERM,
  };
}

export function selectScenarios(all: Scenario[], options: Options): Scenario[] {
  const wanted = options.profile ? [options.profile] : options.scenarios;
  const chosen = wanted
    ? all.filter((scenario) =>
        wanted.some(
          (id) => scenario.id === id || scenario.id.startsWith(`${id}-`) || scenario.id.startsWith(id),
        ),
      )
    : all;
  if (chosen.length === 0)
    throw new UsageError(
      `no scenario matches ${wanted?.join(', ')}; known: ${all.map((s) => s.id).join(', ')}`,
    );
  const allowed = new Set<ServerId>(options.profile ? [options.profileServer] : options.servers);
  return chosen
    .map((scenario) => ({
      ...scenario,
      requests: Object.fromEntries(
        Object.entries({ ...scenario.requests, 'ours-before': scenario.requests.ours }).filter(
          ([id, request]) => request && allowed.has(id as ServerId),
        ),
      ) as Scenario['requests'],
    }))
    .filter((scenario) => Object.keys(scenario.requests).length > 0);
}
