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
