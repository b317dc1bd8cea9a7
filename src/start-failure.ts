import type { Config } from './config';
import { isDatabaseUnavailable } from './db/mongo';
import { ManifestError } from './persisted/manifest';

/**
 * One human line, with the fix, for the start-up failures a person can act on; undefined for the
 * rest (those are logged in full, since they are ours to fix).
 */
export function startFailureHint(error: unknown, config: Config): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return `Port ${config.port} on ${config.host} is already in use: stop the other process, or start with PORT=<another port> (PORT=0 picks a free one).`;
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return `Cannot listen on ${config.host}:${config.port} (${code}): choose another HOST or a PORT above 1023.`;
  }
  if (error instanceof ManifestError) return error.message;
  if (isDatabaseUnavailable(error)) {
    const where = config.mongo.uri ? redactUri(config.mongo.uri) : 'the embedded database';
    return `Cannot reach MongoDB at ${where} within ${config.mongo.timeoutMs} ms: start it, or fix MONGODB_URI (MONGODB_TIMEOUT_MS sets the wait).`;
  }
  if (!config.mongo.uri && error instanceof Error) {
    // Not built yet, and we may not build it (not root): that message already names the fix.
    if (error.name === 'EngineBuildError') return error.message;
    const reason = error.message.split('\n')[0];
    return `The embedded database could not start: ${reason} (its logs: ${config.dataDir}/db/postgres.log and ferretdb.log). Set MONGODB_URI to use a MongoDB you run instead.`;
  }
  return undefined;
}

/** The URI without its password, for messages. */
function redactUri(uri: string): string {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/)([^@/]*@)/, (_, scheme: string, credentials: string) =>
    credentials.includes(':') ? `${scheme}${credentials.split(':')[0]}:***@` : `${scheme}${credentials}`,
  );
}
