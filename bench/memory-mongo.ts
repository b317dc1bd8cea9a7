import { readFile, writeFile, mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BSON } from 'mongodb';

/**
 * A bench-only, in-memory MongoDB stand-in that speaks the wire protocol (OP_QUERY handshake, then
 * OP_MSG) and implements exactly the commands our repositories, the generator and the driver send.
 * It answers the way MongoDB answers with our indexes, at in-memory speed:
 *
 * - documents are kept in `id` order, so `find` sorted on `id` walks them in order and stops at
 *   `skip + limit` matches (MongoDB's {id: 1} index scan with a limit);
 * - equality and `$in` on an indexed field (`id`, `ulid`, `variant.id`, `items.id`, `category_key`,
 *   `customer_id`) are answered from a hash index (MongoDB serves a customer's orders from
 *   {customer_id: 1, ulid: -1});
 * - `count` without a query is O(1) (estimatedDocumentCount reads collection metadata);
 * - everything else (the `$regex` search) is a scan, as on MongoDB.
 *
 * Why it exists: FerretDB 1.24 sorts and counts by loading whole collections, so at the default
 * 10,000 products / 50,000 orders one list request takes seconds and a 5 s run completes almost no
 * request. The servers under test cannot be measured against that. This process's CPU is reported
 * separately ("DB CPU ms/req"), so it never counts as a server's cost. `--db ferretdb` or
 * MONGODB_URI select a real database instead (docs/benchmarks.md).
 *
 * Not a database: no durability (a snapshot file is written on request), no transactions, no
 * unique constraints, only the query operators listed in `matchCondition`.
 */

type Doc = Record<string, unknown>;
type Filter = Record<string, unknown>;

const INDEXED_FIELDS = new Set([
  'id',
  'ulid',
  'variant.id',
  'items.id',
  'category_key',
  'customer_id',
  '_id',
]);

class Collection {
  docs: Doc[] = [];
  indexes: Doc[] = [{ v: 2, key: { _id: 1 }, name: '_id_' }];
  private sorted = true;
  private hashes = new Map<string, Map<unknown, Doc[]>>();

  insert(docs: Doc[]): void {
    for (const doc of docs) {
      const last = this.docs.at(-1);
      if (last && !((doc.id as number) > (last.id as number))) this.sorted = false;
      this.docs.push(doc);
    }
    this.hashes.clear();
  }

  remove(filter: Filter, limit: number): number {
    const before = this.docs.length;
    if (Object.keys(filter).length === 0 && limit === 0) this.docs = [];
    else {
      let removed = 0;
      this.docs = this.docs.filter((doc) => {
        if ((limit === 0 || removed < limit) && matches(doc, filter)) {
          removed++;
          return false;
        }
        return true;
      });
    }
    this.hashes.clear();
    return before - this.docs.length;
  }

  /** Documents in `id` order (MongoDB's {id: 1} index order). */
  inIdOrder(): Doc[] {
    if (!this.sorted) {
      this.docs.sort((a, b) => compareValues(a.id, b.id));
      this.sorted = true;
    }
    return this.docs;
  }

  /** Candidates from a hash index when the filter pins an indexed field; null means "scan". */
  candidates(filter: Filter): Doc[] | null {
    for (const [field, condition] of Object.entries(filter)) {
      if (!INDEXED_FIELDS.has(field)) continue;
      const keys = isOperatorObject(condition)
        ? Array.isArray((condition as { $in?: unknown[] }).$in) &&
          Object.keys(condition as object).length === 1
          ? ((condition as { $in: unknown[] }).$in as unknown[])
          : null
        : [condition];
      if (!keys || keys.some((key) => typeof key === 'object' && key !== null && !(key instanceof Date)))
        continue;
      const hash = this.hash(field);
      const found = new Set<Doc>();
      for (const key of keys) for (const doc of hash.get(key) ?? []) found.add(doc);
      return [...found];
    }
    return null;
  }

  private hash(field: string): Map<unknown, Doc[]> {
    let hash = this.hashes.get(field);
    if (!hash) {
      hash = new Map();
      for (const doc of this.inIdOrder()) {
        for (const value of new Set(valuesAt(doc, field))) {
          const key = value instanceof BSON.ObjectId ? value.toHexString() : value;
          const list = hash.get(key);
          if (list) list.push(doc);
          else hash.set(key, [doc]);
        }
      }
      this.hashes.set(field, hash);
    }
    return hash;
  }
}

// ------------------------------------------------------------------------------ query matching

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date)
    return false;
  if (value instanceof RegExp || value instanceof BSON.ObjectId) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

const NO_VALUES: unknown[] = [undefined];

/** Every value at a dotted path, descending into arrays like MongoDB does. */
function valuesAt(doc: unknown, path: string): unknown[] {
  if (!path.includes('.')) {
    // Fast path for top-level fields (every field the regex search scans).
    const value = (doc as Doc)[path];
    if (value === undefined) return NO_VALUES;
    return Array.isArray(value) ? [value, ...value] : [value];
  }
  let current: unknown[] = [doc];
  for (const part of path.split('.')) {
    const next: unknown[] = [];
    for (const value of current) {
      if (Array.isArray(value)) {
        for (const element of value) {
          if (element && typeof element === 'object') next.push((element as Doc)[part]);
        }
      } else if (value && typeof value === 'object') next.push((value as Doc)[part]);
    }
    current = next;
  }
  return current.flatMap((value) => (Array.isArray(value) ? [value, ...value] : [value]));
}

function equalValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof BSON.ObjectId && b instanceof BSON.ObjectId) return a.equals(b);
  if (a === null && b === undefined) return true;
  if (typeof a === 'object' && typeof b === 'object' && a && b)
    return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

function compareValues(a: unknown, b: unknown): number {
  const left = a instanceof Date ? a.getTime() : a;
  const right = b instanceof Date ? b.getTime() : b;
  if (left === right) return 0;
  if (left === undefined || left === null) return -1;
  if (right === undefined || right === null) return 1;
  return (left as number) < (right as number) ? -1 : 1;
}

const regexCache = new Map<string, RegExp>();
function regexOf(source: unknown, options: unknown): RegExp {
  if (source instanceof RegExp) return source;
  const key = `${String(options ?? '')}/${String(source)}`;
  let regex = regexCache.get(key);
  if (!regex) {
    regex = new RegExp(String(source), String(options ?? '').replace(/[^imsu]/g, ''));
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(key, regex);
  }
  return regex;
}

function matchCondition(values: unknown[], condition: unknown): boolean {
  if (condition instanceof RegExp)
    return values.some((value) => typeof value === 'string' && condition.test(value));
  if (!isOperatorObject(condition)) return values.some((value) => equalValues(value, condition));
  for (const [operator, argument] of Object.entries(condition)) {
    switch (operator) {
      case '$eq':
        if (!values.some((value) => equalValues(value, argument))) return false;
        break;
      case '$ne':
        if (values.some((value) => equalValues(value, argument))) return false;
        break;
      case '$in':
        if (!values.some((value) => (argument as unknown[]).some((item) => equalValues(value, item))))
          return false;
        break;
      case '$gt':
        if (!values.some((value) => value !== undefined && compareValues(value, argument) > 0)) return false;
        break;
      case '$gte':
        if (!values.some((value) => value !== undefined && compareValues(value, argument) >= 0)) return false;
        break;
      case '$lt':
        if (!values.some((value) => value !== undefined && compareValues(value, argument) < 0)) return false;
        break;
      case '$lte':
        if (!values.some((value) => value !== undefined && compareValues(value, argument) <= 0)) return false;
        break;
      case '$exists':
        if (values.some((value) => value !== undefined) !== Boolean(argument)) return false;
        break;
      case '$regex': {
        const regex = regexOf(argument, condition.$options);
        if (!values.some((value) => typeof value === 'string' && regex.test(value))) return false;
        break;
      }
      case '$options':
        break;
      default:
        throw new CommandError(2, `unsupported query operator ${operator} (bench memory database)`);
    }
  }
  return true;
}

function matches(doc: Doc, filter: Filter): boolean {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and') {
      if (!(condition as Filter[]).every((part) => matches(doc, part))) return false;
    } else if (key === '$or') {
      if (!(condition as Filter[]).some((part) => matches(doc, part))) return false;
    } else if (key === '$nor') {
      if ((condition as Filter[]).some((part) => matches(doc, part))) return false;
    } else if (!matchCondition(valuesAt(doc, key), condition)) return false;
  }
  return true;
}

function project(doc: Doc, projection: Record<string, unknown> | undefined): Doc {
  if (!projection || Object.keys(projection).length === 0) return doc;
  const entries = Object.entries(projection);
  const excluding = entries.every(([, value]) => !value);
  if (excluding) {
    const copy = { ...doc };
    for (const [field] of entries) delete copy[field];
    return copy;
  }
  const copy: Doc = {};
  if (projection._id !== 0 && projection._id !== false && '_id' in doc) copy._id = doc._id;
  for (const [field, value] of entries) if (value && field in doc) copy[field] = doc[field];
  return copy;
}

// ------------------------------------------------------------------------------ commands

class CommandError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly codeName = 'BadValue',
  ) {
    super(message);
  }
}

const databases = new Map<string, Map<string, Collection>>();
let snapshotFile: string | undefined;

function collectionOf(db: string, name: string, create: boolean): Collection | undefined {
  let collections = databases.get(db);
  if (!collections) {
    if (!create) return undefined;
    collections = new Map();
    databases.set(db, collections);
  }
  let collection = collections.get(name);
  if (!collection && create) {
    collection = new Collection();
    collections.set(name, collection);
  }
  return collection;
}

/** Matching documents in the requested order, lazily, so a limit stops the walk early. */
function* scan(
  collection: Collection,
  filter: Filter,
  sort: Record<string, number> | undefined,
): Generator<Doc> {
  const sortKeys = Object.entries(sort ?? {});
  const candidates = collection.candidates(filter);
  const byId = sortKeys.length === 0 || (sortKeys.length === 1 && sortKeys[0]?.[0] === 'id');
  if (byId) {
    const descending = sortKeys[0]?.[1] === -1;
    const source = candidates ?? collection.inIdOrder();
    if (candidates && sortKeys.length > 0) source.sort((a, b) => compareValues(a.id, b.id));
    if (descending) {
      for (let index = source.length - 1; index >= 0; index--) {
        const doc = source[index] as Doc;
        if (matches(doc, filter)) yield doc;
      }
    } else {
      for (const doc of source) if (matches(doc, filter)) yield doc;
    }
    return;
  }
  const found = (candidates ?? collection.docs).filter((doc) => matches(doc, filter));
  found.sort((a, b) => {
    for (const [field, direction] of sortKeys) {
      const order = compareValues(valuesAt(a, field)[0], valuesAt(b, field)[0]);
      if (order !== 0) return order * (direction === -1 ? -1 : 1);
    }
    return 0;
  });
  yield* found;
}

function take(source: Iterable<Doc>, skip: number, limit: number): Doc[] {
  const out: Doc[] = [];
  let skipped = 0;
  for (const doc of source) {
    if (skipped < skip) {
      skipped++;
      continue;
    }
    out.push(doc);
    if (limit > 0 && out.length >= limit) break;
  }
  return out;
}

function cursorReply(db: string, collection: string, docs: Doc[], batch = 'firstBatch'): Doc {
  return { cursor: { id: BSON.Long.fromNumber(0), ns: `${db}.${collection}`, [batch]: docs }, ok: 1 };
}

function hello(): Doc {
  return {
    helloOk: true,
    ismaster: true,
    isWritablePrimary: true,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    minWireVersion: 0,
    maxWireVersion: 21,
    readOnly: false,
    connectionId: 1,
    ok: 1,
  };
}

async function saveSnapshot(): Promise<Doc> {
  if (!snapshotFile) throw new CommandError(2, 'no --snapshot file was given');
  const parts: Buffer[] = [];
  for (const [db, collections] of databases) {
    for (const [name, collection] of collections) {
      parts.push(Buffer.from(BSON.serialize({ kind: 'collection', db, name, indexes: collection.indexes })));
      for (const doc of collection.inIdOrder())
        parts.push(Buffer.from(BSON.serialize({ kind: 'doc', db, name, doc })));
    }
  }
  await mkdir(path.dirname(snapshotFile), { recursive: true });
  await writeFile(snapshotFile, Buffer.concat(parts));
  return { ok: 1, bytes: parts.reduce((sum, part) => sum + part.length, 0) };
}

async function loadSnapshot(file: string): Promise<number> {
  let data: Buffer;
  try {
    data = await readFile(file);
  } catch {
    return 0;
  }
  let offset = 0;
  let count = 0;
  const pending = new Map<Collection, Doc[]>();
  while (offset + 4 <= data.length) {
    const size = data.readInt32LE(offset);
    const entry = BSON.deserialize(data.subarray(offset, offset + size));
    offset += size;
    const collection = collectionOf(entry.db as string, entry.name as string, true) as Collection;
    if (entry.kind === 'collection') collection.indexes = entry.indexes as Doc[];
    else {
      const list = pending.get(collection) ?? [];
      list.push(entry.doc as Doc);
      pending.set(collection, list);
      count++;
    }
  }
  for (const [collection, docs] of pending) collection.insert(docs);
  return count;
}

async function runCommand(command: Doc): Promise<Doc> {
  const name = Object.keys(command)[0] ?? '';
  const db = String(command.$db ?? 'admin');
  switch (name) {
    case 'hello':
    case 'isMaster':
    case 'ismaster':
      return hello();
    case 'ping':
    case 'endSessions':
    case 'killCursors':
      return { ok: 1 };
    case 'buildInfo':
    case 'buildinfo':
      return { version: '7.0.0-bench-memory', versionArray: [7, 0, 0, 0], ok: 1 };
    case 'benchSaveSnapshot':
      return saveSnapshot();
    case 'find': {
      const collection = collectionOf(db, String(command.find), false);
      if (!collection) return cursorReply(db, String(command.find), []);
      const filter = (command.filter ?? {}) as Filter;
      const limit = Math.abs(Number(command.limit ?? 0));
      const docs = take(
        scan(collection, filter, command.sort as Record<string, number>),
        Number(command.skip ?? 0),
        limit,
      );
      const projection = command.projection as Record<string, unknown> | undefined;
      return cursorReply(
        db,
        String(command.find),
        docs.map((doc) => project(doc, projection)),
      );
    }
    case 'getMore':
      return cursorReply(db, String(command.collection), [], 'nextBatch');
    case 'count': {
      const collection = collectionOf(db, String(command.count), false);
      if (!collection) return { n: 0, ok: 1 };
      const query = (command.query ?? {}) as Filter;
      if (Object.keys(query).length === 0 && !command.skip && !command.limit)
        return { n: collection.docs.length, ok: 1 };
      return {
        n: take(scan(collection, query, undefined), Number(command.skip ?? 0), Number(command.limit ?? 0))
          .length,
        ok: 1,
      };
    }
    case 'aggregate': {
      const collection = collectionOf(db, String(command.aggregate), false);
      let docs: Doc[] = [];
      let source: Iterable<Doc> = collection ? collection.inIdOrder() : [];
      for (const stage of command.pipeline as Doc[]) {
        const [operator, argument] = Object.entries(stage)[0] ?? [];
        if (operator === '$match') source = collection ? scan(collection, argument as Filter, undefined) : [];
        else if (operator === '$skip') source = take(source, Number(argument), 0);
        else if (operator === '$limit') source = take(source, 0, Number(argument));
        else if (operator === '$group') {
          const spec = argument as Doc;
          const counters = Object.entries(spec).filter(([field]) => field !== '_id');
          for (const [, accumulator] of counters) {
            if ((accumulator as { $sum?: unknown }).$sum !== 1)
              throw new CommandError(2, 'only {$sum: 1} is supported in $group (bench memory database)');
          }
          // `_id` is a constant, a "$field" path or an object of those, as MongoDB evaluates it.
          const evaluate = (expression: unknown, doc: Doc): unknown => {
            if (typeof expression === 'string' && expression.startsWith('$'))
              return valuesAt(doc, expression.slice(1))[0];
            if (expression && typeof expression === 'object' && !Array.isArray(expression))
              return Object.fromEntries(
                Object.entries(expression as Doc).map(([key, value]) => [key, evaluate(value, doc)]),
              );
            return expression;
          };
          const groups = new Map<string, Doc>();
          for (const doc of source) {
            const id = evaluate(spec._id, doc);
            const key = JSON.stringify(id);
            const group = groups.get(key) ?? {
              _id: id,
              ...Object.fromEntries(counters.map(([field]) => [field, 0])),
            };
            for (const [field] of counters) group[field] = (group[field] as number) + 1;
            groups.set(key, group);
          }
          source = [...groups.values()];
        } else throw new CommandError(2, `unsupported pipeline stage ${operator} (bench memory database)`);
      }
      docs = [...source];
      return cursorReply(db, String(command.aggregate), docs);
    }
    case 'insert': {
      const collection = collectionOf(db, String(command.insert), true) as Collection;
      const documents = command.documents as Doc[];
      collection.insert(documents);
      return { n: documents.length, ok: 1 };
    }
    case 'delete': {
      const collection = collectionOf(db, String(command.delete), false);
      let n = 0;
      for (const spec of command.deletes as { q: Filter; limit: number }[])
        n += collection?.remove(spec.q, spec.limit) ?? 0;
      return { n, ok: 1 };
    }
    case 'listIndexes': {
      const collection = collectionOf(db, String(command.listIndexes), false);
      if (!collection)
        throw new CommandError(
          26,
          `ns does not exist: ${db}.${String(command.listIndexes)}`,
          'NamespaceNotFound',
        );
      return cursorReply(db, String(command.listIndexes), collection.indexes);
    }
    case 'createIndexes': {
      const collection = collectionOf(db, String(command.createIndexes), true) as Collection;
      const before = collection.indexes.length;
      for (const index of command.indexes as Doc[]) {
        if (!collection.indexes.some((existing) => existing.name === index.name))
          collection.indexes.push({ v: 2, ...index });
      }
      return { numIndexesBefore: before, numIndexesAfter: collection.indexes.length, ok: 1 };
    }
    case 'listCollections': {
      const names = [...(databases.get(db)?.keys() ?? [])];
      return cursorReply(
        db,
        '$cmd.listCollections',
        names.map((collection) => ({ name: collection, type: 'collection' })),
      );
    }
    case 'drop': {
      databases.get(db)?.delete(String(command.drop));
      return { ok: 1 };
    }
    case 'dropDatabase': {
      databases.delete(db);
      return { ok: 1 };
    }
    default:
      throw new CommandError(59, `no such command: '${name}' (bench memory database)`, 'CommandNotFound');
  }
}

// ------------------------------------------------------------------------------ wire protocol

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
let nextRequestId = 1;

function header(length: number, responseTo: number, opCode: number): Buffer {
  const buffer = Buffer.alloc(16);
  buffer.writeInt32LE(length, 0);
  buffer.writeInt32LE(nextRequestId++, 4);
  buffer.writeInt32LE(responseTo, 8);
  buffer.writeInt32LE(opCode, 12);
  return buffer;
}

function opMsgReply(responseTo: number, body: Doc): Buffer {
  const bson = BSON.serialize(body);
  const head = header(16 + 4 + 1 + bson.length, responseTo, OP_MSG);
  return Buffer.concat([head, Buffer.from([0, 0, 0, 0, 0]), bson]);
}

function opReply(responseTo: number, body: Doc): Buffer {
  const bson = BSON.serialize(body);
  const head = header(16 + 20 + bson.length, responseTo, OP_REPLY);
  const fields = Buffer.alloc(20);
  fields.writeInt32LE(1, 16); // numberReturned
  return Buffer.concat([head, fields, bson]);
}

function parseOpMsg(message: Buffer): { command: Doc; moreToCome: boolean } {
  const flags = message.readUInt32LE(16);
  const end = flags & 1 ? message.length - 4 : message.length;
  let offset = 20;
  let command: Doc = {};
  const sequences: [string, Doc[]][] = [];
  while (offset < end) {
    const kind = message[offset];
    offset += 1;
    if (kind === 0) {
      const size = message.readInt32LE(offset);
      command = BSON.deserialize(message.subarray(offset, offset + size));
      offset += size;
    } else {
      const size = message.readInt32LE(offset);
      const sectionEnd = offset + size;
      let cursor = offset + 4;
      const nameEnd = message.indexOf(0, cursor);
      const identifier = message.toString('utf8', cursor, nameEnd);
      cursor = nameEnd + 1;
      const docs: Doc[] = [];
      while (cursor < sectionEnd) {
        const docSize = message.readInt32LE(cursor);
        docs.push(BSON.deserialize(message.subarray(cursor, cursor + docSize)));
        cursor += docSize;
      }
      sequences.push([identifier, docs]);
      offset = sectionEnd;
    }
  }
  for (const [identifier, docs] of sequences) command[identifier] = docs;
  return { command, moreToCome: Boolean(flags & 2) };
}

function parseOpQuery(message: Buffer): Doc {
  let offset = 20;
  const nameEnd = message.indexOf(0, offset);
  offset = nameEnd + 1 + 8; // collection name, numberToSkip, numberToReturn
  const size = message.readInt32LE(offset);
  return BSON.deserialize(message.subarray(offset, offset + size));
}

function errorReply(error: unknown): Doc {
  if (error instanceof CommandError)
    return { ok: 0, errmsg: error.message, code: error.code, codeName: error.codeName };
  return { ok: 0, errmsg: String((error as Error)?.message ?? error), code: 1, codeName: 'InternalError' };
}

function serve(socket: net.Socket): void {
  socket.setNoDelay(true);
  let pending = Buffer.alloc(0);
  let queue = Promise.resolve();
  socket.on('data', (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readInt32LE(0);
      if (pending.length < length) break;
      const message = pending.subarray(0, length);
      pending = pending.subarray(length);
      const requestId = message.readInt32LE(4);
      const opCode = message.readInt32LE(12);
      // Replies go out in request order on each connection.
      queue = queue.then(async () => {
        if (opCode === OP_QUERY) {
          const query = parseOpQuery(message);
          const reply = await runCommand(query).catch(errorReply);
          socket.write(opReply(requestId, reply));
        } else if (opCode === OP_MSG) {
          const { command, moreToCome } = parseOpMsg(message);
          const reply = await runCommand(command).catch(errorReply);
          if (!moreToCome) socket.write(opMsgReply(requestId, reply));
        } else socket.destroy();
      });
    }
  });
  socket.on('error', () => socket.destroy());
}

export async function startMemoryMongo(options: { port: number; host?: string; snapshot?: string }) {
  snapshotFile = options.snapshot;
  const loaded = options.snapshot ? await loadSnapshot(options.snapshot) : 0;
  const server = net.createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return { server, port: address.port, loaded };
}

const isEntry =
  process.argv[1] && path.resolve(process.argv[1]).endsWith(path.join('bench', 'memory-mongo.ts'));
if (isEntry) {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '0' }, snapshot: { type: 'string' } },
  });
  const { port, loaded } = await startMemoryMongo({ port: Number(values.port), snapshot: values.snapshot });
  console.log(`memory-mongo listening on 127.0.0.1:${port} (${loaded} documents from the snapshot)`);
  const exit = () => process.exit(0);
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
  process.stdin.on('end', exit);
  process.stdin.resume();
}
