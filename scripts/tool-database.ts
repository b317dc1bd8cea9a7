import path from 'node:path';
import type { Config } from '../src/config';
import { findRunningDatabase, startEmbeddedDatabase, type EmbeddedDatabase } from '../src/engine';

export interface ToolDatabase {
  uri: string;
  /** Stops the embedded database started for this tool; one it found or was given is left alone. */
  release(): Promise<void>;
}

/**
 * The database a tool works on, named in one line: MONGODB_URI when set; else the embedded
 * database that a running `npm start` (or `npm run db`) published in DATA_DIR/db; else the
 * embedded database in DATA_DIR/db, started for this run and stopped after it.
 */
export async function openToolDatabase(
  config: Config,
  say: (line: string) => void = (line) => console.log(line),
): Promise<ToolDatabase> {
  const release = async () => undefined;
  if (config.mongo.uri) {
    say(`Using the database "${config.mongo.dbName}" of MONGODB_URI.`);
    return { uri: config.mongo.uri, release };
  }
  const dataDir = path.join(config.dataDir, 'db');
  const useRunning = async (): Promise<ToolDatabase | undefined> => {
    const running = await findRunningDatabase(dataDir);
    if (!running) return undefined;
    say(
      `Using the embedded database of ${running.owner} (PID ${running.pid}) at ${running.uri} (${dataDir}).`,
    );
    return { uri: running.uri, release };
  };
  const running = await useRunning();
  if (running) return running;
  say(`MONGODB_URI is not set: starting the embedded database in ${dataDir}`);
  let embedded: EmbeddedDatabase;
  try {
    embedded = await startEmbeddedDatabase({ dataDir, log: (line) => console.error(line) });
  } catch (error) {
    // A server that was still starting on the folder has published its database by now.
    const published = await useRunning();
    if (published) return published;
    throw new Error(
      `Cannot start the embedded database in ${dataDir}: ${(error as Error).message.split('\n')[0]}. ` +
        'A server on it publishes its address there (running.json) when it has started; or set MONGODB_URI.',
      { cause: error },
    );
  }
  return { uri: embedded.uri, release: () => embedded.stop() };
}
