import net from 'node:net';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config';
import {
  findRunningDatabase,
  publishRunningDatabase,
  startEmbeddedDatabase,
  superviseEmbeddedDatabase,
} from '../src/engine';
import { readCommandLine, usageError } from './command-line';

const usage = `Usage: npm run db [-- --port N] [--data-dir DIR]

Runs the embedded database (PostgreSQL + DocumentDB + FerretDB) on its own and prints its
MONGODB_URI, for mongosh, Compass, scripts and a server started with that MONGODB_URI.
Ctrl-C stops it.
  --port N        loopback port (default 27017)
  --data-dir DIR  its data folder (default: DATA_DIR/db, the one \`npm start\` uses; while npm start
                  runs on it, this prints that database's MONGODB_URI)`;

const { values } = readCommandLine(usage, {
  port: { type: 'string', default: '27017' },
  'data-dir': { type: 'string' },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65_535)
  usageError(`--port must be 1-65535, got "${values.port}"`, usage);

let dataDir = values['data-dir'];
if (dataDir === undefined) {
  try {
    dataDir = path.join(loadConfig().dataDir, 'db');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    usageError(error.message, usage);
  }
}

const running = await findRunningDatabase(path.resolve(dataDir));
if (running) {
  console.log(`MONGODB_URI=${running.uri}`);
  console.log(
    `The embedded database in ${path.resolve(dataDir)} already runs, in ${running.owner} (PID ${running.pid}); it stops with it.`,
  );
  process.exit(0);
}

const portIsFree = await new Promise<boolean>((resolve) => {
  const probe = net.createServer();
  probe.once('error', () => resolve(false));
  probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
});
if (!portIsFree) usageError(`Port ${port} on 127.0.0.1 is in use: pass --port <another port>.`, usage);

let database;
try {
  database = superviseEmbeddedDatabase(
    await startEmbeddedDatabase({ dataDir: path.resolve(dataDir), port, log: (line) => console.error(line) }),
    { log: (message, details) => console.error(message, details ?? '') },
  );
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const unpublish = await publishRunningDatabase(database.dataDir, { uri: database.uri, owner: 'npm run db' });
console.log(`MONGODB_URI=${database.uri}`);
// A server on this database follows other writers through its log with this (README, "Following other writers").
console.log(`CHANGE_FEED_POSTGRES_URL=${database.postgresUrl}`);
console.log(`Embedded database running (data in ${database.dataDir}); Ctrl-C stops it.`);

// The database's processes are unref'd children: this timer is what keeps us running.
const keepAlive = setInterval(() => undefined, 2 ** 30);
const stop = async () => {
  await unpublish();
  await database.stop();
  clearInterval(keepAlive);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
