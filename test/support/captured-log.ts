import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger';

/** A logger at `info` whose JSON lines the test can read back. */
export function capturedLog(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}
