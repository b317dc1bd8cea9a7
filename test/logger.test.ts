import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, prettyLines } from '../src/logger';

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('log lines', () => {
  it('are one JSON object per line by default, with secrets redacted', () => {
    const out = sink();
    createLogger('info', out.stream).info({ headers: { authorization: 'Bearer abc' } }, 'hello');
    const line = JSON.parse(out.text()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, msg: 'hello', service: 'storefront-gateway' });
    expect(out.text()).not.toContain('Bearer abc');
  });

  it('are readable text for a terminal with LOG_FORMAT=pretty, still redacted', async () => {
    const out = sink();
    const logger = createLogger('info', await prettyLines(out.stream));
    logger.info({ headers: { authorization: 'Bearer abc' }, url: 'http://127.0.0.1:4000' }, 'listening');
    logger.debug('below the level');
    const text = out.text();
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening\n/);
    expect(text).toContain('url: "http://127.0.0.1:4000"');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('Bearer abc');
    expect(text).not.toContain('below the level');
    expect(text).not.toContain('storefront-gateway');
  });
});
