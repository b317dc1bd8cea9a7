import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Authorization headers and secrets are redacted wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'storefront-gateway' },
      redact: {
        paths: ['*.authorization', '*.headers.authorization', 'token', '*.token', 'secret', '*.secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * A destination that turns the JSON lines into coloured, one-line-per-event text for a terminal.
 * pino-pretty is imported here and only here, when LOG_FORMAT is pretty (never in production).
 * Synchronous, so a fatal line is written before the process exits.
 */
export async function prettyLines(
  destination: NodeJS.WritableStream | number = 1,
): Promise<pino.DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    destination,
    sync: true,
    colorize: destination === 1 ? undefined : false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
}
